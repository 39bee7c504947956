/**
 * What recording costs: a 10-step session (navigate, observe, three fills with a %secret%, a sign-in click, then two
 * pages by link) run with recording off, with DOM snapshots only, with screenshots only, and with both, interleaved,
 * several rounds. Reports the median navigate and act latency per mode and their ratio to off (goal: under 1.3x with
 * both), the trace zip's size and the time to answer it. Off is the path every session without `record` takes (only
 * the action log entry is added).
 *
 * Then the floor: the same steps in bare Playwright (page.goto, locator.fill, locator.click on the same pages, same
 * browser and flags, no code of ours) with `context.tracing.start` given the same options. What Playwright's own
 * recorders cost there, this project cannot take away while the trace is Playwright's.
 *
 * Last, a big trace: 20 steps (navigate, read the page text) on a 20,000-element page, recorded, then answered; the
 * longest the server's event loop went without a turn while it was (goal: well under the 1 s every other session
 * would wait otherwise).
 */
import { chromium, type Page } from 'playwright-core';
import type { Action, ObservedAction } from '../src/core/act/index.js';
import { DEFAULT_CHROMIUM_ARGS, findBrowserExecutable } from '../src/core/browser.js';
import { silentLogger } from '../src/core/logger.js';
import type { RecordOption } from '../src/core/sessions.js';
import { BrowserService } from '../src/core/service.js';
import { MAX_PAGE_ELEMENTS } from '../src/core/snapshot/size.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { median, printTable } from './table.js';
import { actOperation, extractOperation, navigateOperation, observeOperation } from '../src/core/operations/index.js';

const OWNER = 'bench';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);

interface Timings {
  navigate: number[];
  act: number[];
  traceBytes?: number;
  exportMs?: number;
}

function pick(actions: ObservedAction[], pattern: RegExp, args?: Record<string, unknown>): Action {
  const found = actions.find((action) => pattern.test(action.description));
  if (!found) throw new Error(`no action matching ${pattern}`);
  return { ...found, ...(args ? { arguments: args } : {}) };
}

/** Runs `work`, adding its time in ms to `list`. */
async function timed<T>(list: number[], work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  list.push(performance.now() - started);
  return result;
}

async function session(service: BrowserService, site: SiteServer, record: RecordOption | undefined, into: Timings): Promise<void> {
  const { id } = await service.startSession(OWNER, { record });
  const act = (action: Action, variables?: Record<string, string>) =>
    timed(into.act, () => service.run(actOperation, OWNER, id, { action, variables }));
  const observe = async () => (await service.run(observeOperation, OWNER, id, {})).result.actions;
  try {
    await timed(into.navigate, () => service.run(navigateOperation, OWNER, id, { url: site.url('/recording/login.html') }));
    const form = await observe();
    await act(pick(form, /textbox: Username/, { value: 'alice' }));
    await act(pick(form, /textbox: One-time code/, { value: '%code%' }), { code: 'otp-918273' });
    await act(pick(form, /textbox: Password/, { value: '%secret%' }), { secret: 'S3cr3t-Passw0rd!' });
    await act(pick(form, /button: Sign in/));
    await act(pick(await observe(), /link: Statements/));
    await act(pick(await observe(), /link: Settings/));
    await timed(into.navigate, () => service.run(navigateOperation, OWNER, id, { url: site.url('/recording/statements.html') }));
    if (record) {
      const started = performance.now();
      const zip = await service.recording(OWNER, id);
      into.exportMs = performance.now() - started;
      into.traceBytes = zip.length;
    }
  } finally {
    await service.endSession(OWNER, id);
  }
}

/** The same steps in bare Playwright: what its tracing costs with no code of ours around it. */
async function bareSession(page: Page, site: SiteServer, into: Timings): Promise<void> {
  await timed(into.navigate, () => page.goto(site.url('/recording/login.html')));
  await timed(into.act, () => page.getByRole('textbox', { name: 'Username' }).fill('alice'));
  await timed(into.act, () => page.getByRole('textbox', { name: 'One-time code' }).fill('otp-918273'));
  await timed(into.act, () => page.getByLabel('Password').fill('S3cr3t-Passw0rd!'));
  await timed(into.act, () => page.getByRole('button', { name: 'Sign in' }).click());
  await timed(into.act, () => page.getByRole('link', { name: 'Statements' }).click());
  await timed(into.act, () => page.getByRole('link', { name: 'Settings' }).click());
  await timed(into.navigate, () => page.goto(site.url('/recording/statements.html')));
}

const MODES: Array<{ name: string; record: RecordOption | undefined }> = [
  { name: 'off', record: undefined },
  { name: 'snapshots', record: { screenshots: false, snapshots: true } },
  { name: 'screenshots', record: { screenshots: true, snapshots: false } },
  { name: 'both', record: { screenshots: true, snapshots: true } },
];

function ratioTable(title: string, timings: Map<string, Timings>): void {
  const row = (key: 'navigate' | 'act') => {
    const off = median(timings.get('off')![key]);
    const cells = MODES.map(({ name }) => median(timings.get(name)![key]));
    return [key, timings.get('off')![key].length, ...cells, ...MODES.slice(1).map((_, i) => `${(cells[i + 1]! / off).toFixed(2)}x`)];
  };
  printTable(
    title,
    ['operation', 'calls per mode', ...MODES.map(({ name }) => name), ...MODES.slice(1).map(({ name }) => `${name} / off`)],
    [row('navigate'), row('act')],
  );
}

const empty = (): Timings => ({ navigate: [], act: [] });

const BIG_STEPS = 20;
/** Rows of huge-dom.html just under the page-text limit: four elements a row, plus the page's own few. */
const BIG_ROWS = Math.floor((MAX_PAGE_ELEMENTS - 100) / 4);

/** Records BIG_STEPS steps on the big page, then answers the trace while a 5 ms timer notes the longest gap. */
async function bigTrace(service: BrowserService, site: SiteServer): Promise<Array<string | number>> {
  const { id } = await service.startSession(OWNER, { record: true });
  try {
    for (let step = 0; step < BIG_STEPS; step++) {
      await service.run(navigateOperation, OWNER, id, { url: site.url(`/hostile/huge-dom.html?rows=${BIG_ROWS}&step=${step}`) });
      await service.run(extractOperation, OWNER, id, {});
    }
    let worst = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      worst = Math.max(worst, performance.now() - last);
      last = performance.now();
    }, 5);
    const started = performance.now();
    const zip = await service.recording(OWNER, id);
    const took = performance.now() - started;
    clearInterval(probe);
    return [BIG_STEPS, `${(zip.length / 1024 / 1024).toFixed(1)} MiB`, took, worst];
  } finally {
    await service.endSession(OWNER, id);
  }
}

export async function run(): Promise<void> {
  const service = new BrowserService({ logger: silentLogger() });
  const site = await startSiteServer();
  const ours = new Map(MODES.map(({ name }) => [name, empty()]));
  const bare = new Map(MODES.map(({ name }) => [name, empty()]));
  const sizes: number[] = [];
  const exports: number[] = [];
  const browser = await chromium.launch({ executablePath: findBrowserExecutable(undefined)?.path, args: DEFAULT_CHROMIUM_ARGS });
  try {
    // One session first so Chromium's start is in no mode's figures.
    await session(service, site, undefined, empty());
    for (let round = 0; round < ROUNDS; round++) {
      for (const { name, record } of MODES) {
        const recorded = empty();
        await session(service, site, record, recorded);
        ours.get(name)!.navigate.push(...recorded.navigate);
        ours.get(name)!.act.push(...recorded.act);
        if (name === 'both') {
          sizes.push(recorded.traceBytes!);
          exports.push(recorded.exportMs!);
        }
      }
      for (const { name, record } of MODES) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        if (record && record !== true) await context.tracing.start({ screenshots: record.screenshots, snapshots: record.snapshots });
        await bareSession(await context.newPage(), site, bare.get(name)!);
        await context.close();
      }
    }
    ratioTable(`Recording off and on, ${ROUNDS} rounds of a 10-step session, median ms`, ours);
    ratioTable(`The floor: the same steps in bare Playwright with the same tracing options, ${ROUNDS} rounds, median ms`, bare);
    printTable(
      'Trace of the 10-step session (screenshots + snapshots)',
      ['zip size (median)', 'answering it (median ms)'],
      [[`${(median(sizes) / 1024).toFixed(0)} KiB`, median(exports)]],
    );
    printTable(
      `A big trace: steps on a ${BIG_ROWS * 4}-element page (navigate + page text), recorded, then answered`,
      ['steps', 'zip', 'answering it (ms)', 'longest the event loop waited (ms)'],
      [await bigTrace(service, site)],
    );
  } finally {
    await browser.close();
    await service.close();
    await site.close();
  }
}
