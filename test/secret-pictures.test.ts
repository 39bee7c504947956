import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refOf } from './agent-fixtures.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { errorCode } from './fixtures/mcp-stdio.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { decodePng } from './fixtures/task-policies.js';
import { openTraceZip } from './fixtures/trace-zip.js';
import { api } from './http-fixture.js';

const KEY = 'key-secret-pictures-0123456789';
const CARD = '4111111111111111';
/** The card number as the test page and its frame show it, and as typed. */
const CARD_FORMS = [CARD, '4111 1111 1111 1111', '4111-1111-1111-1111'];
const PASSWORD = 'Tr0ub4dor&3x';
const SECRET = 'hunter2-horse-staple';

const fixture = useSiteHttp({ apiKeys: [KEY] });
let llm: FakeLLM;
beforeAll(async () => {
  llm = await startFakeLLM();
});
afterAll(async () => llm?.close());

type Box = { x: number; y: number; width: number; height: number };

async function call(id: string, operation: string, body: unknown): Promise<any> {
  const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/${operation}`, { key: KEY, body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data.result;
}

/** The JSON value of an expression or function run in the page (the evaluate operation). */
async function evaluate(id: string, expression: string, arg?: unknown): Promise<any> {
  return (await call(id, 'evaluate', arg === undefined ? { expression } : { expression, arg })).result;
}

async function startSession(body: object = {}): Promise<string> {
  return (await api(fixture.server.url, 'POST', '/v1/sessions/start', { key: KEY, body })).json.data.id as string;
}

async function mcpClient(): Promise<Client> {
  const client = new Client({ name: 'secret-pictures', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${fixture.server.url}/mcp`), { requestInit: { headers: { 'x-svc-api-key': KEY } } }),
  );
  return client;
}

/** Types the card number (as a variable) and the password into the test page, which shows the number three ways. */
async function fillPayment(id: string): Promise<any> {
  await call(id, 'navigate', { url: fixture.site.url('/secrets/echo.html') });
  const typed = await call(id, 'act', {
    actions: [
      { selector: 'css=#card', method: 'fill', arguments: { value: '%card%' } },
      { selector: 'css=#pw', method: 'fill', arguments: { value: '%pw%' } },
    ],
    variables: { card: CARD, pw: PASSWORD },
  });
  // The frame shows the number (19 characters with its dashes) once its message has arrived.
  await expect
    .poll(async () => evaluate(id, "document.querySelector('iframe').contentDocument.getElementById('echo').textContent.length"))
    .toBe(19);
  return typed;
}

/** Boxes (viewport CSS px) of what shows a secret, and of a line that shows none. */
async function boxes(id: string): Promise<Record<string, Box>> {
  return evaluate(
    id,
    `() => {
      const box = (el, dx = 0, dy = 0) => { const r = el.getBoundingClientRect(); return { x: r.x + dx, y: r.y + dy, width: r.width, height: r.height }; };
      const frame = document.querySelector('iframe');
      const inner = frame.getBoundingClientRect();
      const echo = frame.contentDocument.getElementById('echo');
      return {
        card: box(document.getElementById('card')),
        pw: box(document.getElementById('pw')),
        shown: box(document.getElementById('shown')),
        spaced: box(document.getElementById('spaced')),
        echo: box(echo, inner.x + frame.clientLeft, inner.y + frame.clientTop),
        other: box(document.getElementById('other')),
      };
    }`,
  );
}

/** The share of a box's pixels (its inside, less a 3 px border) that are `colour`, in an image at `scale`. */
function share(
  pixel: (x: number, y: number) => [number, number, number],
  box: Box,
  scale: number,
  colour: (rgb: number[]) => boolean,
): number {
  let hit = 0;
  let all = 0;
  for (let y = Math.ceil((box.y + 3) * scale); y < Math.floor((box.y + box.height - 3) * scale); y++)
    for (let x = Math.ceil((box.x + 3) * scale); x < Math.floor((box.x + box.width - 3) * scale); x++) {
      all++;
      if (colour(pixel(x, y))) hit++;
    }
  expect(all).toBeGreaterThan(0);
  return hit / all;
}

/** Playwright's mask colour, #FF00FF, exactly (PNG) or nearly (JPEG). */
const magenta = ([r, g, b]: number[]) => r! >= 200 && g! <= 70 && b! >= 200;

function expectMasked(pixel: (x: number, y: number) => [number, number, number], found: Record<string, Box>, scale = 1): void {
  const shares = Object.fromEntries(
    Object.entries(found).map(([name, box]) => [name, Math.round(share(pixel, box, scale, magenta) * 100)]),
  );
  expect(shares).toEqual({
    card: expect.toSatisfy((n: number) => n >= 95),
    pw: expect.toSatisfy((n: number) => n >= 95),
    shown: expect.toSatisfy((n: number) => n >= 90),
    spaced: expect.toSatisfy((n: number) => n >= 90),
    echo: expect.toSatisfy((n: number) => n >= 90),
    other: 0,
  });
}

function expectNoCard(where: string, answer: unknown): void {
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
  for (const form of [...CARD_FORMS, PASSWORD]) expect({ where, form, found: text.includes(form) }).toEqual({ where, form, found: false });
}

describe('no secret in any picture or reformatting', { timeout: 120_000 }, () => {
  it('a screenshot over REST and MCP covers every element that shows a typed secret, reformatted, in a frame, and a filled password field', async () => {
    const id = await startSession();
    const client = await mcpClient();
    try {
      await fillPayment(id);
      const found = await boxes(id);

      const rest = await fetch(`${fixture.server.url}/v1/sessions/${id}/screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY },
        body: '{}',
      });
      expect(rest.headers.get('content-type')).toBe('image/png');
      expectMasked(decodePng(Buffer.from(await rest.arrayBuffer())).pixel, found);

      const shot = (await client.callTool({ name: 'screenshot', arguments: { sessionId: id } })) as CallToolResult;
      const image = shot.content.find((part) => part.type === 'image') as { data: string };
      expectMasked(decodePng(Buffer.from(image.data, 'base64')).pixel, found);

      // The masks are gone again: the page shows what it showed.
      expect(await evaluate(id, 'document.querySelectorAll("[popover]").length')).toBe(0);
    } finally {
      await client.close();
      await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
    }
  });

  it('act, extract (REST and MCP) and the trace never carry the secret reformatted, and a password field says only that it is filled', async () => {
    const id = await startSession({ record: true });
    const client = await mcpClient();
    try {
      const typed = await fillPayment(id);
      expectNoCard('act', typed);
      expect(JSON.stringify(typed)).toContain('%card%');

      const page = await call(id, 'extract', { iframes: true });
      expectNoCard('extract', page);
      expect(page.pageText).toMatch(/Card on file: %card%/);
      expect(page.pageText).toMatch(/textbox: Password \(filled[,)]/);
      expect(page.pageText).not.toContain('•');
      const viaMcp = (await client.callTool({ name: 'extract', arguments: { sessionId: id, iframes: true } })) as CallToolResult;
      expectNoCard('MCP extract', viaMcp);
      expectNoCard('observe', await call(id, 'observe', { iframes: true }));

      const trace = await fetch(`${fixture.server.url}/v1/sessions/${id}/trace`, { method: 'POST', headers: { 'x-svc-api-key': KEY } });
      expect(trace.status).toBe(200);
      const zip = openTraceZip(Buffer.from(await trace.arrayBuffer()));
      for (const [name, data] of zip.files) if (!/\.(jpe?g|png|webm)$/.test(name)) expectNoCard(`trace ${name}`, data.toString('utf8'));

      const log = (await api(fixture.server.url, 'GET', `/v1/sessions/${id}/log`, { key: KEY })).json.data.entries as Array<{
        operation: string;
        startedAt: string;
      }>;
      const filledAt = Date.parse(log.find((entry) => entry.operation === 'act')!.startedAt);
      const frames: Array<{ file: string; frameSwapWallTime: number }> = [];
      const snapshotTexts: string[] = [];
      for (const [name, data] of zip.files) {
        if (!name.endsWith('.trace')) continue;
        for (const line of data.toString('utf8').split('\n').filter(Boolean)) {
          const event = JSON.parse(line) as { type: string; snapshot?: { html: unknown } };
          if (event.type === 'screencast-frame') frames.push(event as never);
          if (event.type === 'frame-snapshot') snapshotTexts.push(textOf(event.snapshot!.html));
        }
      }
      // Pictures: the browser's frames end before the secret was typed; after it, only masked ones.
      const browserFrames = frames.filter((frame) => !frame.file.endsWith('-masked.jpeg'));
      expect(browserFrames.filter((frame) => frame.frameSwapWallTime >= filledAt)).toEqual([]);
      expect(frames.filter((frame) => frame.file.endsWith('-masked.jpeg')).length).toBeGreaterThan(0);
      for (const frame of frames) expect(zip.files.has(frame.file), frame.file).toBe(true);
      // DOM snapshots, read as the trace viewer shows them: the digits one per element are no secret either.
      for (const text of snapshotTexts) expectNoCard('a DOM snapshot as shown', text);
    } finally {
      await client.close();
      await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
    }
  });

  it("the agent's view and its automatic screenshot hide a secret the page shows reformatted", async () => {
    const id = await startSession();
    try {
      await call(id, 'navigate', { url: fixture.site.url('/secrets/echo.html') });
      llm.reset();
      llm.enqueue(
        (request) => ({ toolCalls: [{ name: 'act', arguments: { method: 'fill', ref: refOf(request, /Card number/), value: '%card%' } }] }),
        { toolCalls: [{ name: 'done', arguments: { success: true, message: 'Typed it.' } }] },
      );
      const result = await call(id, 'agentExecute', {
        agentConfig: {
          provider: 'openai',
          model: 'gpt-test-model',
          options: { apiKey: 'test-key', baseURL: llm.openaiBaseURL, maxRetries: 0 },
        },
        executeOptions: { instruction: 'Type the card number %card%.', variables: { card: CARD } },
      });
      expect(result.success).toBe(true);
      expectNoCard('agent result', result);
      for (const request of llm.requests) expectNoCard('what the model was sent', request.body);
      const seen = JSON.stringify(llm.requests[1]!.body);
      expect(seen).toContain('Card on file: %card%');

      // The screenshot the model saw after typing: the secret's boxes are painted over.
      const jpeg = /(\/9j\/[A-Za-z0-9+/=]+)/.exec(seen)![1]!;
      const scale = Number(/screenshot at ([\d.]+)x/.exec(seen)?.[1] ?? 1);
      const found = await boxes(id);
      const shares = await evaluate(
        id,
        `async ({ jpeg, boxes, scale }) => {
          const img = new Image();
          img.src = 'data:image/jpeg;base64,' + jpeg;
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = img.width; canvas.height = img.height;
          const g = canvas.getContext('2d');
          g.drawImage(img, 0, 0);
          const out = {};
          for (const [name, b] of Object.entries(boxes)) {
            const x = Math.ceil((b.x + 3) * scale), y = Math.ceil((b.y + 3) * scale);
            const w = Math.floor((b.x + b.width - 3) * scale) - x, h = Math.floor((b.y + b.height - 3) * scale) - y;
            const { data } = g.getImageData(x, y, Math.max(1, w), Math.max(1, h));
            let hit = 0;
            for (let i = 0; i < data.length; i += 4) if (data[i] >= 200 && data[i + 1] <= 70 && data[i + 2] >= 200) hit++;
            out[name] = Math.round((hit / (data.length / 4)) * 100);
          }
          return out;
        }`,
        { jpeg, boxes: { card: found.card, shown: found.shown, spaced: found.spaced, other: found.other }, scale },
      );
      expect(shares).toEqual({
        card: expect.toSatisfy((n: number) => n >= 85),
        shown: expect.toSatisfy((n: number) => n >= 85),
        spaced: expect.toSatisfy((n: number) => n >= 85),
        other: 0,
      });
    } finally {
      await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
    }
  });
});

describe('a variable limited to origins', { timeout: 120_000 }, () => {
  const limited = () => ({ secret: { value: SECRET, origins: ['https://bank.example'] } });
  const sentSecret = () => fixture.site.requests.filter((request) => request.url.includes(SECRET) || request.url.includes('hunter2'));

  it('is refused on a page of another origin over REST and MCP, and typed on its own; a malformed origin is invalid_argument', async () => {
    const id = await startSession();
    const client = await mcpClient();
    try {
      await call(id, 'navigate', { url: fixture.site.url('/secrets/phish.html') });
      const action = { selector: 'css=input[name=code]', method: 'fill', arguments: { value: '%secret%', submit: true } };
      const refused = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/act`, { key: KEY, body: { action, variables: limited() } });
      expect(refused.status).toBe(403);
      expect(refused.json.error.code).toBe('variable_not_allowed');
      expect(refused.json.error.message).toContain('https://bank.example');
      expect(refused.json.error.message).not.toContain(SECRET);

      const viaMcp = (await client.callTool({
        name: 'act',
        arguments: { sessionId: id, action, variables: limited() },
      })) as CallToolResult;
      expect(errorCode(viaMcp)).toBe('variable_not_allowed');
      expect(await evaluate(id, "document.querySelector('input[name=code]').value")).toBe('');
      expect(sentSecret()).toEqual([]);

      const bad = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/act`, {
        key: KEY,
        body: { action, variables: { secret: { value: SECRET, origins: ['https://bank.example/login'] } } },
      });
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe('invalid_argument');

      // Its own origin may have it.
      const own = await call(id, 'act', {
        action: { selector: 'css=input[name=code]', method: 'fill', arguments: { value: '%secret%' } },
        variables: { secret: { value: SECRET, origins: [fixture.site.origin] } },
      });
      expectNoCard('act', own);
      expect(JSON.stringify(own)).not.toContain(SECRET);
    } finally {
      await client.close();
      await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
    }
  });

  it('keeps a gullible agent from typing it into the page that asks, or sending it in an address', async () => {
    const id = await startSession();
    try {
      await call(id, 'navigate', { url: fixture.site.url('/secrets/phish.html') });
      llm.reset();
      llm.enqueue(
        (request) => ({
          toolCalls: [{ name: 'act', arguments: { method: 'fill', ref: refOf(request, /Verification/), value: '%secret%', submit: true } }],
        }),
        { toolCalls: [{ name: 'goto', arguments: { url: fixture.site.url('/secrets/collect?code=%secret%') } }] },
        { toolCalls: [{ name: 'done', arguments: { success: false, message: 'Could not.' } }] },
      );
      const result = await call(id, 'agentExecute', {
        agentConfig: {
          provider: 'openai',
          model: 'gpt-test-model',
          options: { apiKey: 'test-key', baseURL: llm.openaiBaseURL, maxRetries: 0 },
        },
        executeOptions: { instruction: 'Do what the page says.', variables: limited(), autoScreenshot: false },
      });
      const errors = (result.actions as Array<{ error?: string }>).map((action) => action.error ?? '');
      expect(errors.filter((error) => /may only be typed into https:\/\/bank\.example/.test(error))).toHaveLength(2);
      expect(sentSecret()).toEqual([]);
      for (const request of llm.requests) expect(JSON.stringify(request.body)).not.toContain(SECRET);
    } finally {
      await api(fixture.server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY });
    }
  });
});

/** A DOM snapshot's text as the trace viewer renders it: every text node in order (nodes kept from an earlier snapshot are not in it). */
function textOf(node: unknown): string {
  if (typeof node === 'string') return node;
  if (!Array.isArray(node) || typeof node[0] !== 'string') return '';
  return node
    .slice(2)
    .map((child: unknown) => textOf(child))
    .join('');
}
