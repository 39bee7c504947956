/**
 * What recording costs: a 10-step session (navigate, observe, three fills with a %secret%, a sign-in click, then two
 * pages by link) run with recording off and on (screenshots and DOM snapshots), interleaved, several rounds. Reports
 * the median navigate and act latency per mode, their ratio (goal: under 1.3x), the trace zip's size and the time
 * to answer it. Off is the path every session without `record` takes (only the action log entry is added).
 */
import type { Action, ObservedAction } from '../src/core/act/index.js';
import { silentLogger } from '../src/core/logger.js';
import type { RecordOption } from '../src/core/recording/index.js';
import { BrowserService } from '../src/core/service.js';
import { startSiteServer, type SiteServer } from '../test/fixtures/site-server.js';
import { median, printTable } from './table.js';

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

async function session(service: BrowserService, site: SiteServer, record: RecordOption | undefined, into: Timings): Promise<void> {
  const { id } = await service.startSession(OWNER, { record });
  const timed = async <T>(list: number[], work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    list.push(performance.now() - started);
    return result;
  };
  const act = (action: Action, variables?: Record<string, string>) => timed(into.act, () => service.act(OWNER, id, { action, variables }));
  const observe = async () => (await service.observe(OWNER, id, {})).result.actions;
  try {
    await timed(into.navigate, () => service.navigate(OWNER, id, { url: site.url('/recording/login.html') }));
    const form = await observe();
    await act(pick(form, /textbox: Username/, { value: 'alice' }));
    await act(pick(form, /textbox: One-time code/, { value: '%code%' }), { code: 'otp-918273' });
    await act(pick(form, /textbox: Password/, { value: '%secret%' }), { secret: 'S3cr3t-Passw0rd!' });
    await act(pick(form, /button: Sign in/));
    await act(pick(await observe(), /link: Statements/));
    await act(pick(await observe(), /link: Settings/));
    await timed(into.navigate, () => service.navigate(OWNER, id, { url: site.url('/recording/statements.html') }));
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

export async function run(): Promise<void> {
  const service = new BrowserService({ logger: silentLogger() });
  const site = await startSiteServer();
  const off: Timings = { navigate: [], act: [] };
  const on: Timings = { navigate: [], act: [] };
  const sizes: number[] = [];
  const exports: number[] = [];
  try {
    // One session first so Chromium's start is in neither mode's figures.
    await session(service, site, undefined, { navigate: [], act: [] });
    for (let round = 0; round < ROUNDS; round++) {
      await session(service, site, undefined, off);
      const recorded: Timings = { navigate: [], act: [] };
      await session(service, site, { screenshots: true, snapshots: true }, recorded);
      on.navigate.push(...recorded.navigate);
      on.act.push(...recorded.act);
      sizes.push(recorded.traceBytes!);
      exports.push(recorded.exportMs!);
    }
    const row = (name: string, key: 'navigate' | 'act') => {
      const [a, b] = [median(off[key]), median(on[key])];
      return [name, off[key].length, a, b, `${(b / a).toFixed(2)}x`];
    };
    printTable(
      `Recording off vs on (screenshots + snapshots), ${ROUNDS} rounds of a 10-step session, median ms`,
      ['operation', 'calls per mode', 'off', 'on', 'on / off'],
      [row('navigate', 'navigate'), row('act', 'act')],
    );
    printTable(
      'Trace of the 10-step session',
      ['zip size (median)', 'answering it (median ms)'],
      [[`${(median(sizes) / 1024).toFixed(0)} KiB`, median(exports)]],
    );
  } finally {
    await service.close();
    await site.close();
  }
}
