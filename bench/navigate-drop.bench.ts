/**
 * A navigate dropped while waiting for response headers (issue 17, point 3): a session on a small page starts a
 * navigate to a URL that sends no headers for 60 s, the client drops it (REST, SSE or MCP), and the next call on the
 * session (an extract of the page still there) is timed from the drop. Goal: within 1 s, the page not replaced.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { serveHttp } from '../src/http/server.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { api } from '../test/http-fixture.js';
import { median, printTable } from './table.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

type Drop = (base: string, id: string, url: string, until: () => Promise<void>) => Promise<void>;

/** Resolves once the site has seen a request for `path`. */
async function requested(site: SiteServer, path: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!site.requests.some((request) => request.url === path)) {
    if (Date.now() > deadline) throw new Error(`the browser never asked for ${path}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const service = new BrowserService({ logger: silentLogger() });
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: [], allowedHosts: [] });
  const mcp = new Client({ name: 'bench', version: '1' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`)));
  const doors: Array<[string, Drop]> = [
    [
      'REST',
      async (base, id, url, until) => {
        const abort = new AbortController();
        const call = fetch(`${base}/v1/sessions/${id}/navigate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
          signal: abort.signal,
        }).catch(() => undefined);
        await until();
        abort.abort();
        await call;
      },
    ],
    [
      'SSE',
      async (base, id, url, until) => {
        const abort = new AbortController();
        await fetch(`${base}/v1/sessions/${id}/navigate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-stream-response': 'true' },
          body: JSON.stringify({ url }),
          signal: abort.signal,
        });
        await until();
        abort.abort();
      },
    ],
    [
      'MCP',
      async (_base, id, url, until) => {
        const abort = new AbortController();
        const call = mcp.callTool({ name: 'navigate', arguments: { sessionId: id, url } }, undefined, { signal: abort.signal });
        call.catch(() => undefined);
        await until();
        abort.abort();
      },
    ],
  ];
  try {
    const rows: Array<Array<string | number>> = [];
    let serial = 0;
    for (const [door, drop] of doors) {
      const times: number[] = [];
      let samePage = 0;
      for (let i = 0; i < RUNS; i++) {
        const id = (await api(http.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id as string;
        await api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: site.url('/index.html') } });
        const path = `/slow?ms=60000&drop=${serial++}`;
        await drop(http.url, id, site.url(path), () => requested(site, path));
        const dropped = performance.now();
        const next = (await api(http.url, 'POST', `/v1/sessions/${id}/extract`, { body: {} })).json;
        times.push(performance.now() - dropped);
        if (String(next.data?.result?.pageText ?? '').includes('Test site')) samePage++;
        await api(http.url, 'POST', `/v1/sessions/${id}/end`);
      }
      rows.push([door, RUNS, `${samePage}/${RUNS}`, median(times), Math.min(...times), Math.max(...times)]);
    }
    printTable(
      'The next call (extract) after a navigate dropped while waiting for response headers, timed from the drop (goal: under 1,000 ms)',
      ['door', 'runs', 'same page kept', 'median ms', 'min ms', 'max ms'],
      rows,
    );
  } finally {
    await mcp.close();
    await http.close();
    await service.close();
    await site.close();
  }
}
