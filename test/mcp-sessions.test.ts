import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startHttp, type TestHttp } from './http-fixture.js';

const KEY_A = 'mcp-a-0123456789abcdef';
const KEY_B = 'mcp-b-fedcba9876543210';
const KEY_C = 'mcp-c-00112233445566778';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};

async function initialize(
  url: string,
  key: string,
): Promise<{ status: number; sessionId: string | null; json: any; retryAfter: string | null }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
    body: JSON.stringify(INIT),
  });
  const text = await res.text();
  return {
    status: res.status,
    sessionId: res.headers.get('mcp-session-id'),
    json: text.startsWith('{') ? JSON.parse(text) : text,
    retryAfter: res.headers.get('retry-after'),
  };
}

async function ping(url: string, key: string, sessionId: string): Promise<number> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, 'mcp-session-id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
  });
  await res.text();
  return res.status;
}

/** Opens the session's GET event stream and keeps it open (the session is in use) until the returned abort. */
async function holdStream(url: string, key: string, sessionId: string): Promise<() => void> {
  const controller = new AbortController();
  const res = await fetch(`${url}/mcp`, {
    headers: {
      accept: 'text/event-stream',
      authorization: `Bearer ${key}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  return () => controller.abort();
}

describe('MCP HTTP sessions are bounded', () => {
  let server: TestHttp;

  beforeAll(async () => {
    server = await startHttp(
      { apiKeys: [KEY_A, KEY_B], mcpSessions: { maxSessions: 3, maxSessionsPerKey: 2 } },
      new BrowserService({ logger: silentLogger() }),
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it('per key: an initialize beyond the bound closes the key’s least recently used idle session, or is 429 when all are in use', async () => {
    const a1 = await initialize(server.url, KEY_A);
    const a2 = await initialize(server.url, KEY_A);
    expect([a1.status, a2.status]).toEqual([200, 200]);
    expect(await ping(server.url, KEY_A, a1.sessionId!)).toBe(200);
    // a2 is now the least recently used; a third initialize of key A closes it, not a1.
    const a3 = await initialize(server.url, KEY_A);
    expect(a3.status).toBe(200);
    expect(await ping(server.url, KEY_A, a2.sessionId!)).toBe(404);
    expect(await ping(server.url, KEY_A, a1.sessionId!)).toBe(200);

    // With both of A's sessions in use (an open event stream), one more is refused with a JSON-RPC error.
    const release = await Promise.all([holdStream(server.url, KEY_A, a1.sessionId!), holdStream(server.url, KEY_A, a3.sessionId!)]);
    const refused = await initialize(server.url, KEY_A);
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32002, message: expect.stringMatching(/--max-mcp-sessions-per-key/) },
    });
    expect(server.http.mcpSessionCount()).toBe(2);

    // Overall: key B gets the last slot; its next initialize can only reclaim its own idle session (A's are busy).
    const b1 = await initialize(server.url, KEY_B);
    expect(b1.status).toBe(200);
    const b2 = await initialize(server.url, KEY_B);
    expect(b2.status).toBe(200);
    expect(await ping(server.url, KEY_B, b1.sessionId!)).toBe(404);
    expect(server.http.mcpSessionCount()).toBe(3);
    // Full, with B's one session busy too: 429 naming the global flag and no counts.
    const releaseB = await holdStream(server.url, KEY_B, b2.sessionId!);
    const full = await initialize(server.url, KEY_B);
    expect(full.status).toBe(429);
    expect(full.json.error.message).toMatch(/--max-mcp-sessions\b/);
    expect(full.json.error.message).not.toMatch(/\d/);
    for (const stop of [...release, releaseB]) stop();
  });

  it("at the overall bound, one key's flood closes only its own sessions or those of keys over their share, never another key's within its share", async () => {
    const flood = await startHttp(
      { apiKeys: [KEY_A, KEY_B, KEY_C], mcpSessions: { maxSessions: 4, maxSessionsPerKey: 4 } },
      new BrowserService({ logger: silentLogger() }),
    );
    try {
      // A holds one idle session (the oldest of all); B holds three.
      const a = await initialize(flood.url, KEY_A);
      const b = [];
      for (let i = 0; i < 3; i++) b.push(await initialize(flood.url, KEY_B));
      expect([a, ...b].map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      // C floods: each initialize succeeds by closing one of B's (over its share) or, later, one of C's own.
      for (let i = 0; i < 20; i++) expect((await initialize(flood.url, KEY_C)).status).toBe(200);
      expect(await ping(flood.url, KEY_A, a.sessionId!)).toBe(200);
      expect(flood.http.mcpSessionCount()).toBe(4);
      // B is down to its share (one), C to the rest; with all of them in use, C's next one is refused, not A's closed.
      const alive = await Promise.all(
        b.map(async (answer) => ((await ping(flood.url, KEY_B, answer.sessionId!)) === 200 ? answer : undefined)),
      );
      const bLeft = alive.filter((answer) => answer !== undefined);
      expect(bLeft).toHaveLength(1);
      const cSessions = [];
      for (let i = 0; i < 2; i++) cSessions.push(await initialize(flood.url, KEY_C));
      const release = await Promise.all([
        holdStream(flood.url, KEY_B, bLeft[0]!.sessionId!),
        ...cSessions.map((answer) => holdStream(flood.url, KEY_C, answer.sessionId!)),
      ]);
      const refused = await initialize(flood.url, KEY_C);
      expect(refused).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^\d+$/) });
      expect(refused.json.error.code).toBe(-32002);
      expect(await ping(flood.url, KEY_A, a.sessionId!)).toBe(200);
      for (const stop of release) stop();
    } finally {
      await flood.close();
    }
  });

  it('closes MCP sessions after --mcp-session-idle-timeout, independently of browser sessions', async () => {
    const quick = await startHttp({ mcpSessions: { idleTimeoutMs: 300 } }, new BrowserService({ logger: silentLogger() }));
    try {
      const res = await fetch(`${quick.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INIT) });
      await res.text();
      expect(res.status).toBe(200);
      expect(quick.http.mcpSessionCount()).toBe(1);
      expect(quick.service.sessions.idleTimeoutMs).toBe(15 * 60_000);
      await expect.poll(() => quick.http.mcpSessionCount(), { timeout: 5_000, interval: 100 }).toBe(0);
    } finally {
      await quick.close();
    }
  });
});
