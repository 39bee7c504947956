import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { postToolCall, useMcpHttpClient } from './fixtures/mcp-http.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { within } from './fixtures/within.js';

/** The dropped navigate would hold its session this long if nothing cancelled it. */
const HUNG_TIMEOUT_MS = 60_000;

describe('dropping a /mcp connection mid tools/call', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'cancel-test' });

  // Before 2025-11-25 a stream cannot be resumed, so the call is cancelled at once; after, once the grace has passed.
  it.each(['2025-06-18', '2025-11-25'])('cancels the call like a REST client that disconnects (protocol %s)', async (version) => {
    const started = (await mcp.client.callTool({ name: 'session_start', arguments: {} })) as CallToolResult;
    const sessionId = (started.structuredContent as { id: string }).id;
    const hangs = fixture.site.requests.filter((r) => r.url === '/hang').length;

    const dropped = new AbortController();
    const call = postToolCall(fixture.server.url, mcp, {
      version,
      id: `hung-${version}`,
      name: 'navigate',
      arguments: { sessionId, url: fixture.site.url('/hang'), options: { timeout: HUNG_TIMEOUT_MS } },
      signal: dropped.signal,
    });
    expect((await call).status).toBe(200);
    // The page is loading (its server got the request): now the client goes away without a word.
    await expect.poll(() => fixture.site.requests.filter((r) => r.url === '/hang').length, { timeout: 10_000 }).toBeGreaterThan(hangs);
    dropped.abort();

    const next = mcp.client.callTool({
      name: 'navigate',
      arguments: { sessionId, url: fixture.site.url('/index.html') },
    }) as Promise<CallToolResult>;
    // Judged against the hung navigate's 60 s, not timed.
    const result = await within(next, 20_000, 'the next navigate');
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ status: 200 });
    await mcp.client.callTool({ name: 'session_end', arguments: { sessionId } });
  });
});
