/**
 * Neighbour benchmark: how much a heavy page in one session slows another session of the same browser. Session B
 * navigates a small local page over and over (at least ROUNDS times, and for as long as A's work lasts) while session
 * A sits on a quiet page, loads the 200,000-element page, reads it, reads a page just under the page text's element
 * limit, or sits on a page that changes every 20 ms. Each launch flag set gets its own browser; the sets alternate,
 * REPEATS times, so background load hits each alike.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DEFAULT_CHROMIUM_ARGS } from '../src/core/browser.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { MAX_PAGE_ELEMENTS } from '../src/core/snapshot/size.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { median, printTable } from './table.js';
import { extractOperation, navigateOperation } from '../src/core/operations/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1);
const OWNER = 'bench';
/** Rows of huge-dom.html just under the limit: four elements a row, plus the page's own few. */
const LIMIT_ROWS = Math.floor((MAX_PAGE_ELEMENTS - 100) / 4);

/** Today's launch flags, and (with BENCH_OLD_FLAGS=1) the old default that forced the renderer's accessibility tree on. */
const ALL_FLAG_SETS: Array<{ name: string; args: string[] }> = [
  { name: 'default (--disable-renderer-accessibility)', args: DEFAULT_CHROMIUM_ARGS.slice() },
  {
    name: 'old default (--force-renderer-accessibility=basic)',
    args: DEFAULT_CHROMIUM_ARGS.map((arg) => (arg === '--disable-renderer-accessibility' ? '--force-renderer-accessibility=basic' : arg)),
  },
];
const FLAG_SETS = process.env.BENCH_OLD_FLAGS ? ALL_FLAG_SETS : ALL_FLAG_SETS.slice(0, 1);
/** Issue 22: beside a page read in a loop, B's worst navigate stays under this. */
const WORST_TARGET_MS = 1_000;

interface Scenario {
  name: string;
  page: string;
  /** A's navigation runs beside B's instead of before it. */
  loadBeside?: boolean;
  read?: boolean;
}

const ALL_SCENARIOS: Scenario[] = [
  { name: 'quiet (index.html)', page: '/index.html' },
  { name: '200,000 elements loading', page: '/hostile/huge-dom.html', loadBeside: true },
  { name: '200,000 elements, read in a loop', page: '/hostile/huge-dom.html', read: true },
  { name: `${LIMIT_ROWS * 4} elements, read in a loop`, page: `/hostile/huge-dom.html?rows=${LIMIT_ROWS}`, read: true },
  { name: 'mutating.html (every 20 ms)', page: '/hostile/mutating.html' },
];

/** BENCH_SCENARIOS=quiet,limit runs only the rows whose name contains one of the words (the quiet row always runs first). */
const SCENARIOS = process.env.BENCH_SCENARIOS
  ? ALL_SCENARIOS.filter(
      (scenario, i) =>
        i === 0 ||
        process.env
          .BENCH_SCENARIOS!.split(',')
          .some((word) => scenario.name.includes(word) || (word === 'limit' && scenario.name.startsWith(String(LIMIT_ROWS * 4)))),
    )
  : ALL_SCENARIOS;

interface Sample {
  navigate: number[];
  reads: number[];
  outcomes: Map<string, number>;
}

async function runScenario(service: BrowserService, site: SiteServer, b: string, scenario: Scenario, into: Sample): Promise<void> {
  const a = (await service.startSession(OWNER)).id;
  try {
    let busy = true;
    // On a machine loaded enough that A's page does not load in time, the row says so instead of ending the run.
    const loading = service.run(navigateOperation, OWNER, a, { url: site.url(scenario.page), options: { timeout: 120_000 } }).then(
      () => true,
      (err: { code?: string }) => (
        into.outcomes.set(`load ${err.code ?? 'error'}`, (into.outcomes.get(`load ${err.code ?? 'error'}`) ?? 0) + 1),
        false
      ),
    );
    if (!scenario.loadBeside) await loading;
    const work = (async () => {
      if (!(await loading) || !scenario.read) return;
      // Two reads at least, so B's rounds overlap whole reads, not just their start.
      for (let i = 0; i < 2 || busy; i++) {
        const started = performance.now();
        const outcome = await service.run(extractOperation, OWNER, a, {}).then(
          () => 'text',
          (err: { code?: string }) => err.code ?? 'error',
        );
        into.reads.push(performance.now() - started);
        into.outcomes.set(outcome, (into.outcomes.get(outcome) ?? 0) + 1);
      }
    })();
    let done = false;
    void work.finally(() => (done = true));
    for (let i = 0; i < ROUNDS || !done; i++) {
      const started = performance.now();
      await service.run(navigateOperation, OWNER, b, { url: site.url(i % 2 ? '/page2.html' : '/index.html') });
      into.navigate.push(performance.now() - started);
      if (i >= ROUNDS) busy = false;
    }
    busy = false;
    await work;
  } finally {
    await service.endSession(OWNER, a);
  }
}

export async function run(): Promise<void> {
  const site = await startSiteServer();
  const samples = new Map<string, Sample>();
  const key = (flags: string, scenario: string) => `${flags}\u0000${scenario}`;
  const loads: number[] = [];
  try {
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      const order = repeat % 2 ? [...FLAG_SETS].reverse() : FLAG_SETS;
      for (const flags of order) {
        loads.push(loadavg()[0]!);
        // The defaults are swapped, not added to: the two accessibility flags contradict each other.
        const defaults = DEFAULT_CHROMIUM_ARGS.splice(0, DEFAULT_CHROMIUM_ARGS.length, ...flags.args);
        const service = new BrowserService({ logger: silentLogger() });
        try {
          const b = (await service.startSession(OWNER)).id;
          await service.run(navigateOperation, OWNER, b, { url: site.url('/index.html') });
          for (const scenario of SCENARIOS) {
            const sample = samples.get(key(flags.name, scenario.name)) ?? { navigate: [], reads: [], outcomes: new Map() };
            samples.set(key(flags.name, scenario.name), sample);
            await runScenario(service, site, b, scenario, sample);
          }
        } finally {
          await service.close();
          DEFAULT_CHROMIUM_ARGS.splice(0, DEFAULT_CHROMIUM_ARGS.length, ...defaults);
        }
      }
    }
  } finally {
    await site.close();
  }
  const rows: Array<Array<string | number>> = [];
  for (const flags of FLAG_SETS) {
    const quiet = median(samples.get(key(flags.name, SCENARIOS[0]!.name))!.navigate);
    for (const scenario of SCENARIOS) {
      const { navigate, reads, outcomes } = samples.get(key(flags.name, scenario.name))!;
      const ratio = median(navigate) / quiet;
      const worst = Math.max(...navigate);
      rows.push([
        flags.name,
        scenario.name,
        navigate.length,
        median(navigate),
        worst,
        ratio.toFixed(2),
        ratio <= 1.5 && worst < 2_500 ? 'yes' : 'no',
        worst < WORST_TARGET_MS ? 'yes' : 'no',
        reads.length ? median(reads) : '',
        reads.length ? Math.max(...reads) : '',
        [...outcomes].map(([outcome, n]) => `${outcome} x${n}`).join(', '),
      ]);
    }
  }
  printTable(
    `Session B's navigate beside session A (ms; ${REPEATS} browsers per flag set, alternating; load average ${loads.map((l) => l.toFixed(1)).join(', ')} at each launch; 2 cores)`,
    [
      'flags',
      "A's page",
      'B navigates',
      'median ms',
      'max ms',
      'x quiet',
      'target (<= 1.5x, max < 2500)',
      `max < ${WORST_TARGET_MS}`,
      "A's read median ms",
      "A's read max ms",
      "A's reads",
    ],
    rows,
  );
}
