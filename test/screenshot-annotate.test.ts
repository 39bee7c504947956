import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import { refOf } from './fixtures/refs.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';

interface Bitmap {
  width: number;
  height: number;
  data: Uint8Array;
}
const { PNG } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle') as { PNG: { sync: { read(data: Buffer): Bitmap } } };

/** How many pixels of the box (x, y, width, height; image px) differ between two images of the same size. */
function differing(a: Bitmap, b: Bitmap, [x0, y0, width, height]: [number, number, number, number]): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let count = 0;
  for (let y = y0; y < y0 + height; y++)
    for (let x = x0; x < x0 + width; x++) {
      const i = (y * a.width + x) * 4;
      if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) count++;
    }
  return count;
}

/** The text of an MCP answer; of extract, the page text without the line saying where the page is. */
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text.replace(/^Page: .*\n/, '');

/** Every ref of a page text, once each. */
const refsIn = (text: string) =>
  new Set([...text.matchAll(/\[(\d+(?:-\d+)?)\]|\]\((\d+(?:-\d+)?)\)/g)].map((found) => found[1] ?? found[2]));

// test/sites/act/annotate.html: eight refs (Save, Cancel, Help, Name, the icon-only trash button, Pay, the iframe, Far),
// of which Pay is under a cover and Far below the 1280x800 viewport.
const HIDDEN_IN_VIEWPORT = 2;
const TRASH_LABEL: [number, number, number, number] = [301, 186, 12, 12];
const SAVE_LABEL: [number, number, number, number] = [41, 66, 12, 12];
const BLANK: [number, number, number, number] = [1000, 600, 100, 100];

describe('screenshot {annotate: true} draws the refs of the page text on the image (REST and MCP over HTTP)', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'annotate-test' });
  const PAGE = () => fixture.site.url('/act/annotate.html');

  const rest = (id: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${fixture.server.url}/v1/sessions/${id}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const restSession = async (): Promise<string> => {
    const id = (await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id as string;
    expect((await rest(id, '/navigate', { url: PAGE() })).status).toBe(200);
    return id;
  };
  const pageText = async (id: string): Promise<string> => (await (await rest(id, '/extract', {})).json()).data.result.pageText;
  const shot = async (id: string, body: object) => {
    const res = await rest(id, '/screenshot', body);
    expect(res.status).toBe(200);
    return { res, image: PNG.sync.read(Buffer.from(await res.arrayBuffer())) };
  };

  /** The page text of a session that has read the page, to know which ref the page's numbering gives each element. */
  let known: string;
  beforeAll(async () => {
    known = await pageText(await restSession());
  });

  it('labels the visible refs of a page never read, and a drawn ref acts afterwards (REST, image bytes)', async () => {
    const id = await restSession();
    const save = refOf(known, /button: Save/);
    const plain = await shot(id, {});
    // Nothing has read this page yet: its refs do not exist until the annotated shot reads it.
    const unread = await rest(id, '/act', { action: { ref: save, method: 'click' } });
    expect([unread.status, (await unread.json()).error.code]).toEqual([404, 'ref_not_found']);
    const annotated = await shot(id, { annotate: true });
    expect(Number(annotated.res.headers.get('x-annotated-refs'))).toBe(refsIn(known).size - HIDDEN_IN_VIEWPORT);
    expect(plain.res.headers.get('x-annotated-refs')).toBeNull();
    expect(differing(plain.image, annotated.image, TRASH_LABEL)).toBeGreaterThan(60);
    expect(differing(plain.image, annotated.image, SAVE_LABEL)).toBeGreaterThan(60);
    expect(differing(plain.image, annotated.image, BLANK)).toBe(0);
    // The overlay is gone: a plain shot after it is the plain shot before it.
    expect(differing(plain.image, (await shot(id, {})).image, [0, 0, 1280, 800])).toBe(0);

    const acted = await (await rest(id, '/act', { action: { ref: save, method: 'click' } })).json();
    expect(acted.data.result).toMatchObject({ success: true, diff: { added: ['Saved 1 times'], removed: ['Saved 0 times'] } });
  });

  it('leaves the page text and the next act diff as they were; MCP answers annotated and says it in its text line', async () => {
    const start = await mcp.client.callTool({ name: 'session_start', arguments: {} });
    const sessionId = (start.structuredContent as { id: string }).id;
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const result = (await mcp.client.callTool({ name, arguments: { sessionId, ...args } })) as CallToolResult;
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      return result;
    };
    await call('navigate', { url: PAGE(), pageText: false });
    const before = { pageText: textOf(await call('extract')) };
    const result = await call('screenshot', { annotate: true, fullPage: true });
    // Far is below the viewport but on the page; Pay stays under its cover.
    expect(result.structuredContent).toMatchObject({ mimeType: 'image/png', annotated: refsIn(before.pageText).size - 1 });
    expect((result.content[0] as { text: string }).text).toMatch(/^Screenshot \d+x\d+ image\/png, \d+ bytes, \d+ refs drawn\.$/);
    expect(result.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const after = { pageText: textOf(await call('extract')) };
    expect(after.pageText).toBe(before.pageText);
    const acted = await call('act', { action: { ref: refOf(before.pageText, /button: Save/), method: 'click' } });
    expect(acted.structuredContent).toMatchObject({ success: true, pageChanged: true });
    expect(textOf(acted).split('\n')).toEqual(expect.arrayContaining(['- Saved 0 times', '+ Saved 1 times']));
    await call('session_end');
  });

  it('labels the refs inside iframes as the page text read with iframes names them, and answers JSON on request', async () => {
    const id = await restSession();
    const read = await (await rest(id, '/extract', { iframes: true })).json();
    const text: string = read.data.result.pageText;
    expect(refOf(text, /button: Inside/)).toMatch(/^\d+-\d+$/);
    const plain = await shot(id, {});
    const res = await rest(id, '/screenshot', { annotate: true }, { accept: 'application/json' });
    const { result, contentBase64 } = (await res.json()).data;
    // The iframe's own ref and the button inside it are both drawn.
    expect(result).toMatchObject({ mimeType: 'image/png', annotated: refsIn(text).size - HIDDEN_IN_VIEWPORT });
    const image = PNG.sync.read(Buffer.from(contentBase64, 'base64'));
    // The frame's button: the iframe's content starts 2 px in (its border), the button at the frame's 8 px body margin.
    expect(differing(plain.image, image, [511, 311, 8, 8])).toBeGreaterThan(30);
  });

  it('labels the refs inside one element for a ref screenshot', async () => {
    const id = await restSession();
    const res = await rest(
      id,
      '/screenshot',
      { annotate: true, ref: refOf(known, /button \(icon: trash\)/) },
      { accept: 'application/json' },
    );
    expect((await res.json()).data.result).toMatchObject({ width: 40, height: 40, annotated: 1 });
  });
});
