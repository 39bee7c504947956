/**
 * Browser hosts benchmark: the memory of the server process per session when the browsers run on remote hosts
 * (three playwright-core run-server processes on loopback), and how many sessions per second start through a pool
 * of three hosts, against one host and the local Chromium.
 */
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { ServiceConfig } from '../src/core/config.js';
import { startRunServer, TEST_LAUNCH_OPTIONS, type HostProcess } from '../test/fixtures/browser-hosts.js';
import { startStdioServer } from '../test/fixtures/mcp-stdio.js';
import { pssBytes, rssBytes } from '../test/fixtures/processes.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { median, percentile, printTable } from './table.js';

const MEMORY_STEPS = (process.env.BENCH_POOL_SESSIONS ?? '10,30').split(',').map(Number);
const START_COUNT = Number(process.env.BENCH_POOL_STARTS ?? 30);
const CONCURRENCY = 6;
const OWNER = 'bench';
const MB = 2 ** 20;

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measureMemory(hosts: HostProcess[], site: SiteServer): Promise<void> {
  const flags = hosts.flatMap((host) => ['--playwright-endpoint', host.url]);
  const server = await startStdioServer(
    [...flags, '--remote-launch-options', JSON.stringify(TEST_LAUNCH_OPTIONS), '--max-sessions', '200'],
    { LOG_LEVEL: 'error' },
  );
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await server.call(name, args);
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as { id: string };
  };
  try {
    // Connect every host first, so the 0-session figure includes the three connections.
    const warm = await Promise.all(hosts.map(() => call('session_start')));
    await Promise.all(warm.map(({ id }) => call('session_end', { sessionId: id })));
    await settle(1_000);
    const pid = server.pid!;
    const rows: Array<{ sessions: number; rss: number; pss: number }> = [{ sessions: 0, rss: rssBytes(pid), pss: pssBytes(pid) }];
    const ids: string[] = [];
    for (const target of MEMORY_STEPS) {
      while (ids.length < target) {
        const batch = await Promise.all(Array.from({ length: Math.min(CONCURRENCY, target - ids.length) }, () => call('session_start')));
        await Promise.all(batch.map(({ id }) => call('navigate', { sessionId: id, url: site.url('/frames.html') })));
        ids.push(...batch.map(({ id }) => id));
      }
      await settle(1_500);
      rows.push({ sessions: target, rss: rssBytes(pid), pss: pssBytes(pid) });
    }
    const idle = rows[0]!;
    printTable(
      `Memory of the server process (MCP stdio) with its sessions on 3 run-server hosts (browsers not counted; target: under 5 MB per session)`,
      ['open sessions', 'RSS MB', 'RSS per session MB', 'PSS MB', 'PSS per session MB', 'ok?'],
      rows.map(({ sessions, rss, pss }) => {
        const perSession = sessions ? (rss - idle.rss) / MB / sessions : undefined;
        return [
          sessions,
          rss / MB,
          perSession ?? '-',
          pss / MB,
          sessions ? (pss - idle.pss) / MB / sessions : '-',
          perSession === undefined ? '' : perSession < 5 ? 'yes' : 'no',
        ];
      }),
    );
    await Promise.all(ids.map((id) => call('session_end', { sessionId: id })));
  } finally {
    await server.close();
  }
}

/** Starts START_COUNT sessions, CONCURRENCY at a time, on a warmed-up service; ends them afterwards. */
async function startRate(name: string, config: Partial<ServiceConfig>): Promise<Array<string | number>> {
  const service = new BrowserService({ logger: silentLogger(), maxSessions: 200, ...config });
  try {
    const hostCount = service.browser.hosts.length;
    const warm = await Promise.all(Array.from({ length: hostCount }, () => service.startSession(OWNER)));
    await Promise.all(warm.map(({ id }) => service.endSession(OWNER, id)));
    const latencies: number[] = [];
    const ids: string[] = [];
    const began = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < START_COUNT) {
          const started = performance.now();
          ids.push((await service.startSession(OWNER)).id);
          latencies.push(performance.now() - started);
        }
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    const spread = service.browser
      .status()
      .hosts.map((host) => host.sessions)
      .join('/');
    await Promise.all(ids.map((id) => service.endSession(OWNER, id)));
    return [name, START_COUNT, CONCURRENCY, spread, seconds, START_COUNT / seconds, median(latencies), percentile(latencies, 90)];
  } finally {
    await service.close();
  }
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const hosts = await Promise.all([startRunServer(), startRunServer(), startRunServer()]);
  try {
    const remote = { remoteLaunchOptions: TEST_LAUNCH_OPTIONS };
    const rows = [
      await startRate('local Chromium', {}),
      await startRate('1 run-server host', { ...remote, playwrightEndpoints: [hosts[0]!.url] }),
      await startRate('3 run-server hosts', { ...remote, playwrightEndpoints: hosts.map((host) => host.url) }),
    ];
    printTable(
      `Session starts through a pool: ${START_COUNT} session_start calls, ${CONCURRENCY} at a time, in-process BrowserService, hosts already connected`,
      ['browsers', 'sessions', 'concurrent', 'sessions per host', 'seconds', 'sessions/s', 'median ms', 'p90 ms'],
      rows,
    );
    await measureMemory(hosts, site);
  } finally {
    await Promise.allSettled(hosts.map((host) => host.kill()));
    await site.close();
  }
}
