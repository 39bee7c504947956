import { describe, expect, it } from 'vitest';
import { readZip, SessionSecrets, writeZip, type ZipEntry } from '../src/core/recording/index.js';
import { scrubTrace } from '../src/core/recording/scrub.js';

/** A secret with what JSON escapes (a quote, a backslash) and what it does not (non-ASCII). */
const SECRET = 'pä"ss\\wörd-42';
const COOKIE = 'sid-7f3a9c1e';

const lines = (...events: unknown[]) => Buffer.from(events.map((event) => JSON.stringify(event)).join('\n') + '\n');
const text = (entries: ZipEntry[], name: string) => entries.find((entry) => entry.name === name)!.data.toString('utf8');

function trace(): ZipEntry[] {
  return [
    {
      name: 'trace.trace',
      data: lines(
        { type: 'before', callId: 'call@1', method: 'fill', params: { selector: '#pw', value: SECRET } },
        { type: 'log', callId: 'call@1', message: `fill("${SECRET}")` },
        {
          type: 'frame-snapshot',
          snapshot: {
            callId: 'call@2',
            html: ['HTML', {}, ['BODY', {}, ['INPUT', { type: 'PASSWORD', __playwright_value_: 'typed-by-hand' }]]],
          },
        },
        { type: 'frame-snapshot', snapshot: { callId: 'call@3', html: ['HTML', {}, ['BODY', {}, ['P', {}, 'nothing secret here']]] } },
      ),
    },
    {
      name: 'trace.network',
      data: lines({
        type: 'resource-snapshot',
        snapshot: {
          request: {
            url: 'http://127.0.0.1/login',
            headers: [{ name: 'Cookie', value: `sid=${COOKIE}` }],
            cookies: [{ name: 'sid', value: COOKIE }],
          },
          response: { headers: [{ name: 'Set-Cookie', value: `sid=${COOKIE}; HttpOnly` }], cookies: [] },
        },
      }),
    },
    { name: 'resources/post.dat', data: Buffer.from(`user=alice&password=${encodeURIComponent('typed-by-hand')}`) },
  ];
}

describe('trace scrub', () => {
  it('masks a secret JSON escapes, blanks a password input (any case) and masks its value everywhere, redacts cookies', async () => {
    const secrets = new SessionSecrets();
    secrets.addVariables({ secret: SECRET });
    const scrubbed = await scrubTrace(trace(), secrets);
    const all = scrubbed.map((entry) => entry.data.toString('utf8')).join('\n');
    for (const secret of [SECRET, JSON.stringify(SECRET).slice(1, -1), 'typed-by-hand', COOKIE]) expect(all).not.toContain(secret);
    const events = text(scrubbed, 'trace.trace')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(events[0]!.params.value).toBe('%secret%');
    expect(events[1]!.message).toBe('fill("%secret%")');
    expect(events[2]!.snapshot.html[2][2][1].__playwright_value_).toBe('');
    expect(text(scrubbed, 'resources/post.dat')).toBe('user=alice&password=%5Bpassword%5D');
    expect(text(scrubbed, 'trace.network')).toContain('"value":"[redacted]"');
  });

  it('keeps the lines with nothing to mask byte for byte, and an entry with nothing to mask as the same bytes', async () => {
    const secrets = new SessionSecrets();
    secrets.addVariables({ secret: SECRET });
    const entries = trace();
    const scrubbed = await scrubTrace(entries, secrets);
    const lastLine = entries[0]!.data.toString('utf8').trim().split('\n')[3]!;
    expect(text(scrubbed, 'trace.trace').trim().split('\n')[3]).toBe(lastLine);
    const plain = { name: 'trace.stacks', data: Buffer.from('{"files":[],"stacks":[]}\n') };
    expect((await scrubTrace([plain], secrets))[0]!.data).toBe(plain.data);
  });

  it('masks a secret in a line that is not JSON, as typed there', async () => {
    const secrets = new SessionSecrets();
    secrets.addVariables({ secret: SECRET });
    const scrubbed = await scrubTrace([{ name: 'trace.trace', data: Buffer.from(`{"type":"log"}\nnot json: ${SECRET}\n`) }], secrets);
    expect(text(scrubbed, 'trace.trace')).toBe('{"type":"log"}\nnot json: %25secret%25\n');
  });

  it('gives the event loop turns while it scrubs a big trace, so other sessions are not held', async () => {
    // 400 snapshots of a page with a password input: each line must be parsed and walked.
    const rows = Array.from({ length: 300 }, (_, i) => ['P', {}, `row ${i} of a long page`]);
    const snapshot = (i: number) => ({
      type: 'frame-snapshot',
      snapshot: {
        callId: `call@${i}`,
        html: ['HTML', {}, ['BODY', {}, ['INPUT', { type: 'password', __playwright_value_: '' }], ...rows]],
      },
    });
    const big = [{ name: 'trace.trace', data: lines(...Array.from({ length: 400 }, (_, i) => snapshot(i))) }];
    let turns = 0;
    const timer = setInterval(() => turns++, 1);
    try {
      await scrubTrace(big, new SessionSecrets());
    } finally {
      clearInterval(timer);
    }
    expect(turns).toBeGreaterThan(0);
  });

  it('writes a zip that reads back the same files', async () => {
    const entries: ZipEntry[] = [...trace(), { name: 'screencast/frame.jpeg', data: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]) }];
    const back = await readZip(await writeZip(entries));
    expect(back.map(({ name, data }) => [name, data.toString('base64')])).toEqual(
      entries.map(({ name, data }) => [name, data.toString('base64')]),
    );
  });
});
