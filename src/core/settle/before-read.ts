import { sleep } from '../time.js';
import type { Session, WatchedPage } from '../sessions.js';
import type { Probe } from './page-script.js';
import { probePage } from './probe.js';
import { SETTLE, trackerOf, type SettledAt } from './state.js';

/**
 * The settle policy of a read, from cheapest to most careful (docs/pagetext.md, "Waiting for the page to settle"):
 * - a request that matters is open, or the document is still parsing: wait;
 * - same document as when it last counted as settled and no DOM change or network event since: read at once;
 * - the document has loaded and nothing happened after its load event: read once AFTER_LOAD_MS have passed since it;
 * - otherwise (the page changed after loading: data arriving, a script rendering, an action's effect):
 *   read once the DOM and the network have both been still for STILL_BEFORE_READ_MS.
 * DOM changes made by intervals and chains of timers older than CHAIN_MS are background and do not count (src/core/settle/).
 * After an action, act waits by the stricter policy of src/core/settle/after-action.ts first.
 */
const STILL_BEFORE_READ_MS = 150;
/** Catches rendering queued at load (a timer of 0, an animation frame) on a page that showed no activity since. */
const AFTER_LOAD_MS = 50;
/** Upper bound of one sleep between probes, so an open request that stalls is noticed soon. */
const POLL_MS = 50;

/** The page watcher of the settle policy: network and DOM-change tracking must start with the page, before its first navigation. */
export function watchSettle(watched: WatchedPage): void {
  trackerOf(watched);
}

/** Milliseconds still to wait before reading, 0 when the page counts as settled (the policy at the top of this file). */
export function settleDelay(
  probe: Probe,
  network: { busy: boolean; lastActivity: number; lastStart: number; events: number },
  last: SettledAt | undefined,
): number {
  if (network.busy || probe.loading) return POLL_MS;
  if (!probe.fresh && last && last.origin === probe.origin && last.count === probe.count && last.events === network.events) return 0;
  // Requests of the load itself report their end a little after the load event; only a request started later is activity after load.
  if (!probe.fresh && probe.loadedAt > 0 && probe.lastChange <= probe.loadedAt && network.lastStart <= probe.loadedAt) {
    return Math.max(0, probe.loadedAt + AFTER_LOAD_MS - probe.now);
  }
  return Math.max(0, Math.max(probe.lastChange, network.lastActivity) + STILL_BEFORE_READ_MS - probe.now);
}

/**
 * Waits until the main document settled (see the policy above), at most `timeoutMs`;
 * then returns either way, because a page that never settles is still read as it is.
 */
export async function waitForSettledDom(session: Session, timeoutMs: number, callTimeoutMs: number, signal?: AbortSignal): Promise<void> {
  const watched = session.watched;
  // A session whose registry has no settle watcher (a bare test setup) starts tracking at its first read.
  const tracker = trackerOf(watched);
  const state = watched.state.get(SETTLE);
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return;
    let probe: Probe | null;
    try {
      probe = await probePage(watched, Math.min(remaining, callTimeoutMs));
    } catch {
      // The page does not answer (a script loop, or mid-navigation): stop waiting and let the read decide.
      return;
    }
    if (!probe) return;
    const network = { busy: tracker.busy(), lastActivity: tracker.lastActivity, lastStart: tracker.lastStart, events: tracker.events };
    const delay = settleDelay(probe, network, state.lastSettled);
    if (delay === 0) {
      // The read that follows starts from this state; any change after it makes the next read wait again.
      state.lastSettled = { origin: probe.origin, count: probe.count, events: network.events };
      return;
    }
    await sleep(Math.min(delay, POLL_MS, Math.max(0, deadline - Date.now())), signal);
  }
}
