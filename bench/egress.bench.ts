/**
 * Egress benchmark: what the policy "public" costs (every browser request through the session's filtering proxy, a
 * pre-check of each navigate's host) against "all" (direct), on the same local pages. Two services, each with its
 * own Chromium and the same flags; rounds alternate which goes first. Target (issue 11): navigate median within 1.15x.
 */
import { performance } from 'node:perf_hooks';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { startSiteServer } from '../test/fixtures/site-server.js';
import { median, percentile, printTable } from './table.js';
import { navigateOperation } from '../src/core/operations/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 3;
const OWNER = 'bench';
const PAGES = ['/index.html', '/page2.html', '/frames.html'];

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const port = Number(new URL(site.origin).port);
  const services = [
    { name: 'all (direct)', service: new BrowserService({ logger: silentLogger(), egressPolicy: 'all' }) },
    {
      name: 'public (proxy + pre-check)',
      service: new BrowserService({ logger: silentLogger(), egressPolicy: 'public', egressAllow: [`127.0.0.1:${port}`] }),
    },
  ];
  const navigations = services.map(() => [] as number[]);
  const starts = services.map(() => [] as number[]);
  try {
    const ids = await Promise.all(services.map(({ service }) => service.startSession(OWNER).then((info) => info.id)));
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const order = round % 2 ? [1, 0] : [0, 1];
      for (const i of order) {
        const { service } = services[i]!;
        const url = site.url(PAGES[round % PAGES.length]!);
        const ms = await time(() => service.run(navigateOperation, OWNER, ids[i]!, { url }));
        if (round >= WARMUP) navigations[i]!.push(ms);
      }
    }
    for (let round = 0; round < Math.min(ROUNDS, 20); round++) {
      for (const i of round % 2 ? [1, 0] : [0, 1]) {
        const { service } = services[i]!;
        let id = '';
        starts[i]!.push(await time(async () => (id = (await service.startSession(OWNER)).id)));
        await service.endSession(OWNER, id);
      }
    }
  } finally {
    await Promise.all(services.map(({ service }) => service.close()));
    await site.close();
  }
  const base = median(navigations[0]!);
  // Rounds are paired (same page, back to back), so the per-round ratio cancels much of a shared machine's noise.
  const paired = median(navigations[1]!.map((ms, round) => ms / navigations[0]![round]!));
  const baseStart = median(starts[0]!);
  printTable(
    `Egress policy cost: navigate, median of ${ROUNDS} rounds (ms; local pages ${PAGES.join(', ')}), and session_start (${starts[0]!.length} rounds)`,
    ['egress policy', 'navigate median', 'navigate p90', 'x all', 'x all, paired', 'target', 'ok?', 'session_start median', 'x all'],
    services.map(({ name }, i) => {
      const ratio = median(navigations[i]!) / base;
      return [
        name,
        median(navigations[i]!),
        percentile(navigations[i]!, 90),
        ratio,
        i === 0 ? 1 : paired,
        i === 0 ? '' : '<= 1.15x',
        i === 0 ? '' : ratio <= 1.15 && paired <= 1.15 ? 'yes' : 'no',
        median(starts[i]!),
        median(starts[i]!) / baseStart,
      ];
    }),
  );
}
