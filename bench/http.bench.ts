/**
 * HTTP benchmark: navigate (and a call with no browser work) through REST, MCP over streamable HTTP and the
 * in-process BrowserService, interleaved on one shared session with the door order rotating each round; the paired difference of
 * medians is the transport overhead. Then throughput of 30 sessions navigating at once through REST.
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { LOCAL_OWNER } from '../src/door.js';
import { serveHttp } from '../src/http/server.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { median, percentile, printTable } from './table.js';
import { navigateOperation } from '../src/core/operations/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 3;
const NOOP_ROUNDS = 200;
const CONCURRENT = 30;
const PER_SESSION = Number(process.env.BENCH_PER_SESSION ?? 10);
const OWNER = 'bench';

interface Door {
  name: string;
  navigate(url: string): Promise<void>;
  getSession(): Promise<void>;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`benchmark call failed: ${what}`);
}

async function rest(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  check(res.ok, `${method} ${path}: ${JSON.stringify(json)}`);
  return json;
}

/** Every session navigates PER_SESSION times in a row, all sessions at once; a failed or thrown call counts as an error. */
async function throughput(
  door: string,
  ids: string[],
  pageUrl: (path: string) => string,
  navigate: (id: string, url: string) => Promise<boolean>,
): Promise<Array<string | number>> {
  const path = (n: number) => (n % 2 ? '/page2.html' : '/index.html');
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    ids.map(async (id, i) => {
      for (let n = 0; n < PER_SESSION; n++) {
        const t0 = performance.now();
        const ok = await navigate(id, pageUrl(path(n + i))).catch(() => false);
        if (!ok) errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const total = ids.length * PER_SESSION;
  return [door, total, errors, seconds, total / seconds, median(latencies), percentile(latencies, 90)];
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const service = new BrowserService({ logger: silentLogger(), maxSessions: 2 * CONCURRENT + 10 });
  // No API key: then REST, /mcp and in-process calls share one owner, and so can share one session.
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: [], allowedHosts: [] });
  const transport = new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`));
  const mcp = new Client({ name: 'bench', version: '1' });
  await mcp.connect(transport);
  try {
    // One session behind all three doors, so every door's navigations run on the same page and browser state.
    const sessionId = (await service.startSession(LOCAL_OWNER)).id;
    const restId = sessionId;
    const mcpId = sessionId;
    const inProcessId = sessionId;
    const doors: Door[] = [
      {
        name: 'in-process BrowserService',
        navigate: async (url) => void (await service.run(navigateOperation, LOCAL_OWNER, inProcessId, { url })),
        getSession: async () => void service.getSession(LOCAL_OWNER, inProcessId),
      },
      {
        name: 'REST (fetch, keep-alive)',
        navigate: async (url) => void (await rest(http.url, 'POST', `/v1/sessions/${restId}/navigate`, { url })),
        getSession: async () => void (await rest(http.url, 'GET', `/v1/sessions/${restId}`)),
      },
      {
        name: 'MCP over streamable HTTP',
        navigate: async (url) => {
          const result = (await mcp.callTool({ name: 'navigate', arguments: { sessionId: mcpId, url } })) as CallToolResult;
          check(!result.isError, JSON.stringify(result.content));
        },
        getSession: async () => {
          const result = (await mcp.callTool({ name: 'session_list', arguments: {} })) as CallToolResult;
          check(!result.isError, JSON.stringify(result.content));
        },
      },
    ];

    const samples = new Map(doors.map((door) => [door.name, { navigate: [] as number[], get: [] as number[] }]));
    let call = 0;
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      // The order of the doors rotates each round and every call changes page, so no door always gets the same transition.
      for (let k = 0; k < doors.length; k++) {
        const door = doors[(round + k) % doors.length]!;
        const url = site.url(call++ % 2 ? '/page2.html' : '/index.html');
        const started = performance.now();
        await door.navigate(url);
        if (round >= WARMUP) samples.get(door.name)!.navigate.push(performance.now() - started);
      }
    }
    // Calls without browser work show the transport alone, without the page-load noise.
    for (let round = 0; round < WARMUP + NOOP_ROUNDS; round++) {
      for (const door of doors) {
        const started = performance.now();
        await door.getSession();
        if (round >= WARMUP) samples.get(door.name)!.get.push(performance.now() - started);
      }
    }
    const base = samples.get(doors[0]!.name)!;
    printTable(
      `Latency per call, doors interleaved: ${ROUNDS} navigations, ${NOOP_ROUNDS} no-op calls (get session / session_list) each (ms; overhead = median of the per-round differences from the in-process call)`,
      ['door', 'navigate median', 'navigate p90', 'navigate overhead', 'no-op call median', 'no-op overhead'],
      doors.map((door) => {
        const s = samples.get(door.name)!;
        // Paired by round: each navigation is compared with the in-process one of the same round, under the same load.
        const paired = (mine: number[], theirs: number[]) => median(mine.map((ms, i) => ms - theirs[i]!));
        return [
          door.name,
          median(s.navigate),
          percentile(s.navigate, 90),
          paired(s.navigate, base.navigate),
          median(s.get),
          paired(s.get, base.get),
        ];
      }),
    );

    const ids: string[] = [];
    for (let i = 0; i < CONCURRENT; i++) ids.push((await rest(http.url, 'POST', '/v1/sessions/start')).data.id as string);
    const localIds: string[] = [];
    for (let i = 0; i < CONCURRENT; i++) localIds.push((await service.startSession(OWNER)).id);
    const rows = [
      await throughput('in-process BrowserService', localIds, site.url, (id, url) =>
        service.run(navigateOperation, OWNER, id, { url }).then(() => true),
      ),
      await throughput('REST (fetch)', ids, site.url, async (id, url) => {
        const res = await fetch(`${http.url}/v1/sessions/${id}/navigate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        });
        await res.arrayBuffer();
        return res.ok;
      }),
    ];
    printTable(
      `Throughput: ${CONCURRENT} sessions navigating at once, ${PER_SESSION} navigations each`,
      ['door', 'operations', 'errors', 'seconds', 'ops/s', 'latency median (ms)', 'latency p90 (ms)'],
      rows,
    );
    await Promise.all(localIds.map((id) => service.endSession(OWNER, id)));
    await Promise.all(ids.map((id) => rest(http.url, 'POST', `/v1/sessions/${id}/end`)));
  } finally {
    await mcp.close().catch(() => undefined);
    await http.close();
    await service.close();
    await site.close();
  }
}
