/**
 * Sessions benchmark: session_start and navigate latency through the MCP stdio door and the in-process
 * BrowserService, side by side with raw playwright-core on the same local pages (raw and in-process share one
 * Chromium; the stdio server launches its own with the same flags); then the memory of the server + browser
 * process tree with 1, 10 and 50 open sessions.
 */
import { performance } from 'node:perf_hooks';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startStdioServer, type StdioServer } from '../test/fixtures/mcp-stdio.js';
import { treePssBytes, treeRssBytes } from '../test/fixtures/processes.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { median, percentile, printTable } from './table.js';
import { navigateOperation } from '../src/core/operations/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 3;
const OWNER = 'bench';
const PAGES = ['/index.html', '/page2.html', '/frames.html'];

interface Door {
  name: string;
  startSession(): Promise<string>;
  endSession(id: string): Promise<void>;
  navigate(id: string, url: string): Promise<void>;
  close(): Promise<void>;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

function rawDoor(browser: Browser): Door {
  const open = new Map<string, { context: BrowserContext; page: Page }>();
  let next = 0;
  return {
    name: 'raw playwright-core',
    async startSession() {
      const context = await browser.newContext({ acceptDownloads: false, viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const id = String(next++);
      open.set(id, { context, page });
      return id;
    },
    async endSession(id) {
      await open.get(id)?.context.close();
      open.delete(id);
    },
    async navigate(id, url) {
      await open.get(id)!.page.goto(url);
    },
    close: async () => {
      for (const { context } of open.values()) await context.close();
      open.clear();
    },
  };
}

function inProcessDoor(service: BrowserService): Door {
  return {
    name: 'in-process BrowserService',
    startSession: async () => (await service.startSession(OWNER)).id,
    endSession: (id) => service.endSession(OWNER, id),
    navigate: async (id, url) => void (await service.run(navigateOperation, OWNER, id, { url })),
    close: () => service.close(),
  };
}

function stdioDoor(server: StdioServer): Door {
  const check = <R extends { isError?: boolean; content?: unknown }>(result: R): R => {
    if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
    return result;
  };
  return {
    name: 'MCP stdio',
    startSession: async () => (check(await server.call('session_start')).structuredContent as { id: string }).id,
    endSession: async (id) => void check(await server.call('session_end', { sessionId: id })),
    navigate: async (id, url) => void check(await server.call('navigate', { sessionId: id, url })),
    close: () => server.close(),
  };
}

/**
 * Each round times session_start on every door, ends those sessions, then times navigate on every door;
 * the door order rotates per round so background load and context teardown hit each door alike.
 */
async function measureLatency(doors: Door[], site: SiteServer): Promise<Map<string, { start: number[]; navigate: number[] }>> {
  const samples = new Map(doors.map((door) => [door.name, { start: [] as number[], navigate: [] as number[] }]));
  const navIds = new Map<string, string>();
  for (const door of doors) navIds.set(door.name, await door.startSession());
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    const url = site.url(PAGES[round % PAGES.length]!);
    const order = doors.map((_, i) => doors[(i + round) % doors.length]!);
    const started = new Map<Door, string>();
    for (const door of order) {
      const ms = await time(async () => started.set(door, await door.startSession()));
      if (round >= WARMUP) samples.get(door.name)!.start.push(ms);
    }
    for (const [door, id] of started) await door.endSession(id);
    for (const door of order) {
      const ms = await time(() => door.navigate(navIds.get(door.name)!, url));
      if (round >= WARMUP) samples.get(door.name)!.navigate.push(ms);
    }
  }
  for (const door of doors) await door.endSession(navIds.get(door.name)!);
  return samples;
}

interface MemorySample {
  sessions: number;
  rss: number;
  pss: number;
}

async function measureMemory(server: StdioServer, site: SiteServer): Promise<MemorySample[]> {
  const door = stdioDoor(server);
  const ids: string[] = [];
  const rows: MemorySample[] = [];
  const sample = (sessions: number) => rows.push({ sessions, rss: treeRssBytes(server.pid!), pss: treePssBytes(server.pid!) });
  // Launch the browser first, so the 0-session figure includes it.
  await door.endSession(await door.startSession());
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  sample(0);
  for (const target of [1, 10, 50]) {
    while (ids.length < target) {
      const batch = Array.from({ length: Math.min(10, target - ids.length) }, () => door.startSession());
      const started = await Promise.all(batch);
      await Promise.all(started.map((id) => door.navigate(id, site.url('/index.html'))));
      ids.push(...started);
    }
    // Let processes settle before sampling.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    sample(target);
  }
  await Promise.all(ids.map((id) => door.endSession(id)));
  return rows;
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const service = new BrowserService({ logger: silentLogger(), maxSessions: 100 });
  // Raw playwright-core drives the in-process service's own Chromium, so that pair differs only in our code.
  const raw = rawDoor(await service.browser.get());
  const server = await startStdioServer(['--max-sessions', '100'], { LOG_LEVEL: 'error' });
  const doors = [raw, inProcessDoor(service), stdioDoor(server)];
  try {
    const samples = await measureLatency(doors, site);
    const base = samples.get(raw.name)!;
    const rows: Array<Array<string | number>> = [];
    for (const [operation, key, target] of [
      ['session_start', 'start', 1.5],
      ['navigate', 'navigate', 1.1],
    ] as const) {
      const rawMedian = median(base[key]);
      rows.push([operation, raw.name, rawMedian, percentile(base[key], 90), '1.00', '', '']);
      for (const door of doors.slice(1)) {
        const values = samples.get(door.name)![key];
        const ratio = median(values) / rawMedian;
        rows.push([
          operation,
          door.name,
          median(values),
          percentile(values, 90),
          ratio.toFixed(2),
          `<= ${target.toFixed(1)}x`,
          ratio <= target ? 'yes' : 'no',
        ]);
      }
    }
    printTable(
      `Latency, median of ${ROUNDS} rounds (ms; local pages ${PAGES.join(', ')})`,
      ['operation', 'door', 'median ms', 'p90 ms', 'x raw', 'target', 'ok?'],
      rows,
    );

    await raw.close();
    await service.close();
    const memory = await measureMemory(server, site);
    const idle = memory[0]!;
    const mb = (bytes: number) => bytes / 2 ** 20;
    printTable(
      'Memory of the MCP stdio server + its Chromium process tree (from /proc; PSS shares pages fairly, RSS counts shared pages once per process)',
      ['open sessions', 'PSS MB', 'PSS per session MB', 'RSS MB', 'RSS per session MB'],
      memory.map(({ sessions, rss, pss }) => [
        sessions,
        mb(pss),
        sessions ? mb(pss - idle.pss) / sessions : '-',
        mb(rss),
        sessions ? mb(rss - idle.rss) / sessions : '-',
      ]),
    );
  } finally {
    await raw.close().catch(() => undefined);
    await service.close().catch(() => undefined);
    await server.close().catch(() => undefined);
    await site.close();
  }
}
