import type { CDPSession } from 'playwright-core';
import { withTimeout } from '../time.js';
import type { WatchedPage } from './watched.js';

/** How long a page gets to answer a trivial script before it counts as held by one of its own. */
export const STUCK_PROBE_MS = 500;

/** `answered`: nothing holds the page; `stopped`: a script held it and was terminated; `stuck`: it still does not answer. */
export type RunawayCheck = 'answered' | 'stopped' | 'stuck';

/**
 * Whether the page's main thread runs a trivial script within `probeMs`. When it does not, the script holding it (a
 * loop, a handler that never returns, a regex that backtracks, in the page's world or Playwright's) is terminated with
 * CDP Runtime.terminateExecution, as evaluate does at its deadline, and the page is asked again. Raw CDP: Playwright's
 * evaluate would wait for a pending navigation's new document. A crashed page counts as answered (its crash is handled
 * on its own path).
 */
export async function stopRunawayScript(watched: WatchedPage, probeMs = STUCK_PROBE_MS): Promise<RunawayCheck> {
  const cdp = await withTimeout(Promise.race([watched.cdp(), watched.crash]), probeMs, () => new Error('no CDP session')).catch(
    () => undefined,
  );
  if (!cdp) return watched.crashed ? 'answered' : 'stuck';
  if (await answers(watched, cdp, probeMs)) return 'answered';
  await withTimeout(cdp.send('Runtime.terminateExecution'), probeMs, () => new Error('no answer')).catch(() => undefined);
  // A termination asked for just as the script ended stops the next script instead (maybe the first probe here).
  for (let tries = 0; tries < 2; tries++) if (await answers(watched, cdp, probeMs)) return 'stopped';
  return 'stuck';
}

/** Whether the page settles a trivial evaluate within `ms`: a value, an exception or a refusal all mean its thread is free. */
function answers(watched: WatchedPage, cdp: CDPSession, ms: number): Promise<boolean> {
  const call = Promise.race([cdp.send('Runtime.evaluate', { expression: '1', returnByValue: true }), watched.crash]);
  return withTimeout(
    call.then(
      () => true,
      () => true,
    ),
    ms,
    () => new Error('no answer'),
  ).catch(() => false);
}
