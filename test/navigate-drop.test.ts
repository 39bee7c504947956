import { describe, expect, it } from 'vitest';
import { useMcpHttpClient } from './fixtures/mcp-http.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { api } from './http-fixture.js';

/** The issue measured 20 s (a 408 timeout, then the page replaced); the next call must not wait on the dropped navigation. */
const NEXT_CALL_BOUND_MS = 8_000;

describe('a navigate dropped while waiting for response headers', () => {
  const fixture = useSiteHttp();
  const mcp = useMcpHttpClient(() => fixture.server.url, { name: 'navigate-drop-test' });

  /** A session on /index.html whose navigate to a page that sends no headers for 60 s is dropped by `drop`. */
  async function dropOne(tag: string, drop: (id: string, url: string) => Promise<void>): Promise<{ id: string; ms: number }> {
    const id = (await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id as string;
    const loaded = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: fixture.site.url('/index.html') } });
    expect(loaded.json.data.result.status).toBe(200);
    const slow = `/slow?ms=60000&${tag}`;
    await drop(id, fixture.site.url(slow));
    const dropped = performance.now();
    const next = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/extract`, { body: {} });
    const ms = performance.now() - dropped;
    expect(next.status).toBe(200);
    // The page that was there before is still there: not replaced by a blank one, not left for the slow one.
    expect(next.json.data.result.pageText).toContain('Test site');
    const info = await api(fixture.server.url, 'GET', `/v1/sessions/${id}`);
    expect(info.json.data.url).toBe(fixture.site.url('/index.html'));
    expect(info.json.data.recentEvents.map((event: { type: string }) => event.type)).not.toContain('unresponsive');
    return { id, ms };
  }

  const sent = (path: string) =>
    expect.poll(() => fixture.site.requests.some((request) => request.url === path), { timeout: 30_000 }).toBe(true);

  it('REST: the next call answers at once, on the same page', async () => {
    const { ms } = await dropOne('rest', async (id, url) => {
      const abort = new AbortController();
      const call = fetch(`${fixture.server.url}/v1/sessions/${id}/navigate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
        signal: abort.signal,
      }).catch(() => undefined);
      await sent(new URL(url).pathname + new URL(url).search);
      abort.abort();
      await call;
    });
    expect(ms).toBeLessThan(NEXT_CALL_BOUND_MS);
  });

  it('SSE: the next call answers at once, on the same page', async () => {
    const { ms } = await dropOne('sse', async (id, url) => {
      const abort = new AbortController();
      const res = await fetch(`${fixture.server.url}/v1/sessions/${id}/navigate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-stream-response': 'true' },
        body: JSON.stringify({ url }),
        signal: abort.signal,
      });
      expect(res.status).toBe(200);
      await sent(new URL(url).pathname + new URL(url).search);
      abort.abort();
    });
    expect(ms).toBeLessThan(NEXT_CALL_BOUND_MS);
  });

  it('MCP: the next call answers at once, on the same page', async () => {
    const { ms } = await dropOne('mcp', async (id, url) => {
      const abort = new AbortController();
      const call = mcp.client.callTool({ name: 'navigate', arguments: { sessionId: id, url } }, undefined, { signal: abort.signal });
      call.catch(() => undefined);
      await sent(new URL(url).pathname + new URL(url).search);
      abort.abort();
    });
    expect(ms).toBeLessThan(NEXT_CALL_BOUND_MS);
  });
});
