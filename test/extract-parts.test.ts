import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { MCP_PAGE_TEXT_MAX_TOKENS } from '../src/core/operations/extract.js';
import { errorCode, startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { rejection } from './fixtures/rejection.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

// Page text in parts (issue 22): maxTokens and cursor through the library and MCP stdio, on real Chromium.
let site: SiteServer;
let library: BrowserSessions;
let session: BrowserSession;
let mcp: StdioServer;

interface Part {
  pageText: string;
  nextCursor?: string;
  remainingTokens?: number;
}

beforeAll(async () => {
  site = await startSiteServer();
  library = new BrowserSessions({ env: {} });
  session = await library.startSession();
  mcp = await startStdioServer([], {});
});

afterAll(async () => {
  await Promise.allSettled([mcp?.close(), library?.close()]);
  await site?.close();
});

/** Every part of the page text, following nextCursor, through `call`. */
async function allParts(call: (cursor?: string) => Promise<Part>): Promise<Part[]> {
  const parts = [await call()];
  for (let last = parts[0]!; last.nextCursor !== undefined;) {
    expect(parts.length).toBeLessThan(100);
    parts.push((last = await call(last.nextCursor)));
  }
  return parts;
}

describe('page text in parts through the library', () => {
  it('answers the whole text without maxTokens, and parts within maxTokens that join into the same text with it', async () => {
    await session.navigate(site.url('/pages/long-list.html'));
    const whole = (await session.page.extract({})) as Part;
    expect(whole.nextCursor).toBeUndefined();
    const maxTokens = 700;
    const parts = await allParts(async (cursor) => (await session.page.extract({ maxTokens, cursor })) as Part);
    expect(parts.length).toBeGreaterThan(3);
    expect(parts.map((part) => part.pageText).join('')).toBe(whole.pageText);
    for (const part of parts) expect(countTokens(part.pageText)).toBeLessThanOrEqual(maxTokens);
    // Each part but the last says what is left, and what is left shrinks to the last part.
    const remaining = parts.slice(0, -1).map((part) => part.remainingTokens!);
    expect(remaining).toEqual([...remaining].sort((a, b) => b - a));
    expect(remaining.at(-1)).toBeGreaterThanOrEqual(countTokens(parts.at(-1)!.pageText) - 2);
    expect(parts.at(-1)!.remainingTokens).toBeUndefined();
    // Cut at line ends: every part but the last ends with a whole line.
    for (const part of parts.slice(0, -1)) expect(part.pageText.endsWith('\n')).toBe(true);
  });

  it('answers a page that fits in maxTokens whole, without a cursor', async () => {
    await session.navigate(site.url('/pages/form.html'));
    const part = (await session.page.extract({ maxTokens: 20_000 })) as Part;
    expect(part.nextCursor).toBeUndefined();
    expect(part.pageText).toContain('Create your account');
  });

  it('refuses an unknown cursor, a cursor with an instruction, and a maxTokens under 100 with invalid_argument', async () => {
    await session.navigate(site.url('/pages/long-list.html'));
    expect((await rejection(session.page.extract({ cursor: 'nope.12' }))).code).toBe('invalid_argument');
    const first = (await session.page.extract({ maxTokens: 500 })) as Part;
    expect(first.nextCursor).toBeDefined();
    expect((await rejection(session.page.extract({ cursor: first.nextCursor, instruction: 'Summarise' }))).code).toBe('invalid_argument');
    expect((await rejection(session.page.extract({ maxTokens: 10 }))).code).toBe('invalid_argument');
  });
});

describe('page text in parts over MCP', () => {
  it(`cuts a page over ${MCP_PAGE_TEXT_MAX_TOKENS} tokens by default and says in the text how much is left`, async () => {
    const sessionId = (await mcp.call('session_start')).structuredContent!.id as string;
    // 300 rows of a link, a price, a button and 80 words: over 20,000 tokens of page text from about 1,500 elements
    // (8,000 elements for the same tokens took over the 10 s read bound at a load average of 20).
    await mcp.call('navigate', { sessionId, url: site.url('/hostile/huge-dom.html?rows=300&words=80') });
    const parts = await allParts(async (cursor) => {
      const result = await mcp.call('extract', { sessionId, ...(cursor ? { cursor } : {}) });
      expect(errorCode(result)).toBeUndefined();
      // The part itself is the text content; structuredContent says where the rest is, as the text's last line does.
      const facts = result.structuredContent as Omit<Part, 'pageText'>;
      const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
      if (facts.nextCursor === undefined) {
        expect(facts).toEqual({});
        return { pageText: text };
      }
      const note = text.lastIndexOf('\n(page text continues');
      expect(text.slice(note)).toContain(String(facts.remainingTokens));
      expect(text.slice(note)).toContain(facts.nextCursor);
      return { pageText: text.slice(0, note), ...facts };
    });
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(countTokens(part.pageText)).toBeLessThanOrEqual(MCP_PAGE_TEXT_MAX_TOKENS);
    const whole = parts.map((part) => part.pageText).join('');
    expect(whole).toContain('Buy 0');
    expect(whole).toContain('Buy 299');
    expect(countTokens(whole)).toBeGreaterThan(MCP_PAGE_TEXT_MAX_TOKENS);
  }, 120_000);
});
