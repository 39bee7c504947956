import { readFileSync } from 'node:fs';
import { countTokens as tokenizer } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILL_CHARS, MAX_TYPE_CHARS } from '../src/core/act/index.js';
import { operations } from '../src/core/operations/index.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { countTokens, tokenCounter } from '../src/core/tokens.js';
import { MAX_VARIABLE_LENGTH } from '../src/core/variables.js';
import { buildTools } from '../src/mcp/tools.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';

/** `n` letters that no o200k token spans more than a few of, as a page of random letters has. */
function randomLetters(n: number, seed = 7): string {
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    out[i] = String.fromCharCode(97 + ((seed >>> 0) % 26));
  }
  return out.join('');
}

/**
 * Issue 40, item 1: the tokenizer's time grows with the square of a word's length, and it ran on the server's only
 * thread, so one page of long words stalled every key's calls for seconds to minutes.
 */
describe('counting tokens of long words', () => {
  // The tokenizer's tables load at the first count (about half a second), which is not what these time.
  beforeAll(() => void countTokens('load'));

  it('counts a 1,000,000-letter word at once and within a few percent', () => {
    const word = randomLetters(1_000_000);
    // Random letters cost about one token per 1.93 letters: the tokenizer's own count of 10,000 of them.
    const rate = tokenizer(randomLetters(10_000, 11)) / 10_000;
    const started = performance.now();
    const tokens = countTokens(word);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(Math.abs(tokens / (word.length * rate) - 1)).toBeLessThan(0.05);
  });

  it('counts text of ordinary words exactly, and a page saying "<|endoftext|>" as text', () => {
    // Counted in pieces cut before spaces: the same count as the tokenizer's over the whole.
    for (const file of ['golden/long-list.txt', 'golden/article.txt']) {
      const text = readFileSync(new URL(file, import.meta.url), 'utf8');
      expect(countTokens(text)).toBe(tokenizer(text));
    }
    // The tokenizer throws on its special tokens unless told otherwise.
    expect(countTokens('say <|endoftext|> here')).toBe(tokenizer('say <|endoftext|> here', { disallowedSpecial: new Set() }));
  });

  it("bounds one answer's counting in time, and estimates the rest at the rate it counted", () => {
    // 5 MB of words of random letters: tens of seconds to count exactly.
    const words = Array.from({ length: 600_000 }, (_, i) => randomLetters(8, i + 1)).join(' ');
    const count = tokenCounter(50);
    const started = performance.now();
    const tokens = count(words);
    expect(performance.now() - started).toBeLessThan(1_000);
    const rate = tokenizer(words.slice(0, 20_000)) / 20_000;
    expect(Math.abs(tokens / (words.length * rate) - 1)).toBeLessThan(0.1);
  });
});

describe('a page of 100,000-letter words over REST, with two API keys', () => {
  const KEY_A = 'long-words-a-0123456789';
  const KEY_B = 'long-words-b-9876543210';
  let site: SiteServer;
  let server: TestHttp;

  beforeAll(async () => {
    countTokens('load');
    site = await startSiteServer();
    server = await startHttp({ apiKeys: [KEY_A, KEY_B] }, new BrowserService({ logger: silentLogger(), egressPolicy: 'all' }));
  });
  afterAll(async () => {
    await server?.close();
    await site?.close();
  });

  const start = async (key: string) => (await api(server.url, 'POST', '/v1/sessions/start', { key, body: {} })).json.data.id as string;
  const call = async (key: string, id: string, path: string, body: unknown) => {
    const res = await api(server.url, 'POST', `/v1/sessions/${id}${path}`, { key, body });
    expect(res.status, JSON.stringify(res.json).slice(0, 500)).toBe(200);
    return res.json.data;
  };

  it("another key's calls keep their latency while one key reads, acts on and fills the page", { timeout: 120_000 }, async () => {
    const [a, b] = [await start(KEY_A), await start(KEY_B)];
    await call(KEY_B, b, '/navigate', { url: site.url('/page2.html') });

    // Key B times plain calls for as long as key A works: its session's info (the server alone) and its short
    // page's text (its browser too, which a loaded machine slows by itself).
    let done = false;
    const latencies = { info: [] as number[], read: [] as number[] };
    const timing = (async () => {
      while (!done) {
        for (const [kind, method, path, body] of [
          ['info', 'GET', `/v1/sessions/${b}`, undefined],
          ['read', 'POST', `/v1/sessions/${b}/extract`, {}],
        ] as const) {
          const started = performance.now();
          const res = await api(server.url, method, path, { key: KEY_B, body });
          latencies[kind].push(performance.now() - started);
          expect(res.status).toBe(200);
        }
      }
    })();

    try {
      const letters = randomLetters(MAX_FILL_CHARS);
      await call(KEY_A, a, '/navigate', { url: site.url('/hostile/long-words.html') });
      const page = (await call(KEY_A, a, '/extract', { maxTokens: 20_000 })).result;
      // A part within maxTokens, and ten words of 100,000 random letters (about 520,000 tokens) after it.
      expect(countTokens(page.pageText)).toBeLessThan(22_000);
      expect(page.remainingTokens).toBeGreaterThan(400_000);
      expect(page.remainingTokens).toBeLessThan(650_000);
      const next = (await call(KEY_A, a, '/extract', { cursor: page.nextCursor, maxTokens: 20_000 })).result;
      expect(next.pageText.length).toBeGreaterThan(10_000);
      const changed = (await call(KEY_A, a, '/act', { action: { selector: 'css=#change', method: 'click' } })).result;
      expect(changed.pageChanged).toBe(true);
      const fill = { selector: 'css=#notes', method: 'fill', arguments: { value: letters } };
      expect((await call(KEY_A, a, '/act', { action: fill })).result.pageChanged).toBe(true);
      await call(KEY_A, a, '/extract', { maxTokens: 20_000 });
    } finally {
      done = true;
      await timing;
    }
    // Before the fix, each of key A's calls held the server 19-92 s, and key B's calls waited as long.
    expect(latencies.info.length).toBeGreaterThan(2);
    expect(Math.max(...latencies.info)).toBeLessThan(1_000);
    expect(Math.max(...latencies.read)).toBeLessThan(2_000);
  });

  it('refuses a fill over its bound with invalid_argument before anything runs, and tools/list states the bound', async () => {
    const act = buildTools(operations, { sessionIdleTimeoutMs: 900_000 }).find((tool) => tool.name === 'act')!;
    expect(act.listing.description).toContain(`fill {value ≤${MAX_FILL_CHARS}, submit?}, type {text ≤${MAX_TYPE_CHARS}}`);
    const a = await start(KEY_A);
    const started = performance.now();
    const res = await api(server.url, 'POST', `/v1/sessions/${a}/act`, {
      key: KEY_A,
      body: { action: { selector: 'css=#notes', method: 'fill', arguments: { value: 'x'.repeat(10_000_000) } } },
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect([res.status, res.json.error.code]).toEqual([400, 'invalid_argument']);
    expect(res.json.error.message).toContain(String(MAX_FILL_CHARS));
    expect(res.json.error.message.length).toBeLessThan(1_000);
  });

  it('refuses a variable over its bound, and a variable at the bound costs the session no stall', async () => {
    const a = await start(KEY_A);
    await call(KEY_A, a, '/navigate', { url: site.url('/hostile/long-words.html') });
    const fill = (value: string) =>
      api(server.url, 'POST', `/v1/sessions/${a}/act`, {
        key: KEY_A,
        body: { action: { selector: 'css=#notes', method: 'fill', arguments: { value: '%token%' } }, variables: { token: value } },
      });
    const over = await fill('t'.repeat(MAX_VARIABLE_LENGTH + 1));
    expect([over.status, over.json.error.code]).toEqual([400, 'invalid_argument']);
    // Masking searches every answer for the value in every reformatted form: at the bound that stays quick.
    const started = performance.now();
    const at = await fill('t'.repeat(MAX_VARIABLE_LENGTH - 1) + 'z');
    expect(at.json.success).toBe(true);
    expect(JSON.stringify(at.json)).not.toContain('tttttttttttz');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
