import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { startHttp, type TestHttp } from './http-fixture.js';

/** The dropped navigate would hold its session this long if nothing cancelled it. */
const HUNG_TIMEOUT_MS = 60_000;

/** Rejects when `promise` has not settled within `ms`: the call is judged against the hung one's 60 s, not timed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

describe('dropping a /mcp connection mid tools/call', () => {
  let site: SiteServer;
  let server: TestHttp;
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    site = await startSiteServer();
    server = await startHttp();
    transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
    client = new Client({ name: 'cancel-test', version: '1.0.0' });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await site?.close();
  });

  // Before 2025-11-25 a stream cannot be resumed, so the call is cancelled at once; after, once the grace has passed.
  it.each(['2025-06-18', '2025-11-25'])('cancels the call like a REST client that disconnects (protocol %s)', async (version) => {
    const started = (await client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
    const sessionId = (started.structuredContent as { id: string }).id;
    const hangs = site.requests.filter((r) => r.url === '/hang').length;

    const dropped = new AbortController();
    const call = fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': version,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: `hung-${version}`,
        method: 'tools/call',
        params: { name: 'navigate', arguments: { sessionId, url: site.url('/hang'), options: { timeout: HUNG_TIMEOUT_MS } } },
      }),
      signal: dropped.signal,
    });
    expect((await call).status).toBe(200);
    // The page is loading (its server got the request): now the client goes away without a word.
    await expect.poll(() => site.requests.filter((r) => r.url === '/hang').length, { timeout: 10_000 }).toBeGreaterThan(hangs);
    dropped.abort();

    const next = client.callTool({ name: 'navigate', arguments: { sessionId, url: site.url('/index.html') } }) as Promise<CallToolResult>;
    const result = await within(next, 20_000, 'the next navigate');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ success: true, data: { result: { status: 200 } } });
    await client.callTool({ name: 'session_end', arguments: { sessionId } });
  });
});
