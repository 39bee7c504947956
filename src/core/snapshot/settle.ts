import type { Page, Request } from 'playwright-core';
import { sleep } from '../operation.js';
import { stateKey, type Session, type WatchedPage } from '../sessions.js';
import { bounded } from './cdp.js';

/**
 * The settle policy, from cheapest to most careful (docs/pagetext.md, "Waiting for the page to settle"):
 * - a request that matters is open, or the document is still parsing: wait;
 * - same document as the last read and no DOM change or network event since: read at once;
 * - the document has loaded and nothing happened after its load event: read once AFTER_LOAD_MS have passed since it;
 * - otherwise (the page changed after loading: data arriving, a script rendering, an action's effect):
 *   read once the DOM and the network have both been still for QUIET_MS.
 */
const QUIET_MS = 150;
/** Catches rendering queued at load (a timer of 0, an animation frame) on a page that showed no activity since. */
const AFTER_LOAD_MS = 50;
/** A request open longer than this is a long poll or a stalled load, not part of rendering. */
const STALLED_MS = 3_000;
/** Upper bound of one sleep between probes, so an open request that stalls is noticed soon. */
const POLL_MS = 50;
const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'ping', 'beacon']);
const SETTLE_KEY = 'bsm.settle';

/** In every document from its start: counts structural DOM changes and records the time of the last. Strings, so no bundler helper leaks into the page. */
const INSTALL_OBSERVER = `(() => {
  const slot = Symbol.for(${JSON.stringify(SETTLE_KEY)});
  if (window[slot]) return false;
  const state = { last: performance.now(), count: 0 };
  window[slot] = state;
  new MutationObserver(() => { state.last = performance.now(); state.count++; }).observe(document, { subtree: true, childList: true, characterData: true });
  return true;
})()`;
/**
 * The document's settle state; times are epoch ms so they compare with the network tracker's. DOM changes in
 * same-origin iframes count too (their observer comes from the same init script): a form submitted inside a frame
 * changes the frame first and tells the page later, by a message that may not have arrived when the probe runs.
 */
const PROBE = `(() => {
  const fresh = ${INSTALL_OBSERVER};
  const slot = Symbol.for(${JSON.stringify(SETTLE_KEY)});
  const state = window[slot];
  const origin = performance.timeOrigin;
  let count = state.count, lastChange = origin + state.last;
  const visit = (win) => {
    for (let i = 0; i < win.frames.length; i++) {
      try {
        const frame = win.frames[i], inner = frame[slot];
        if (inner) { count += inner.count; lastChange = Math.max(lastChange, frame.performance.timeOrigin + inner.last); }
        visit(frame);
      } catch { /* a cross-origin frame: out of reach */ }
    }
  };
  visit(window);
  const nav = performance.getEntriesByType('navigation')[0];
  return { fresh, loading: document.readyState === 'loading', now: origin + performance.now(), lastChange, count,
    origin, loadedAt: nav && nav.loadEventEnd > 0 ? origin + nav.loadEventEnd : 0 };
})()`;

interface Probe {
  fresh: boolean;
  loading: boolean;
  now: number;
  lastChange: number;
  count: number;
  /** Identifies the document: a new document has a new time origin. */
  origin: number;
  /** 0 until the load event has finished. */
  loadedAt: number;
}

class NetworkTracker {
  private readonly inflight = new Map<Request, number>();
  lastActivity = 0;
  /** When the latest request started: one started after the load event is the page fetching more, not loading. */
  lastStart = 0;
  /** Counts request starts and ends, so "nothing happened since" is a comparison. */
  events = 0;

  constructor(page: Page) {
    page.on('request', (request) => {
      if (IGNORED_TYPES.has(request.resourceType())) return;
      this.inflight.set(request, Date.now());
      this.touch();
      this.lastStart = this.lastActivity;
    });
    const done = (request: Request) => {
      if (this.inflight.delete(request)) this.touch();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
  }

  private touch(): void {
    this.lastActivity = Date.now();
    this.events++;
  }

  /** Whether a request that matters is open; one open longer than STALLED_MS stops counting. */
  busy(): boolean {
    const now = Date.now();
    for (const [request, started] of this.inflight) {
      if (now - started > STALLED_MS) this.inflight.delete(request);
    }
    return this.inflight.size > 0;
  }
}

interface LastRead {
  origin: number;
  count: number;
  events: number;
}

/** A page's settle state: its network activity, and what the page looked like at the last read. */
interface SettleState {
  tracker?: NetworkTracker;
  lastRead?: LastRead;
}
const SETTLE = stateKey<SettleState>('snapshot.settle', () => ({}));

/** The page watcher of the settle policy: network and DOM-change tracking must start with the page, before its first navigation. */
export function watchSettle(watched: WatchedPage): void {
  trackerOf(watched);
}

function trackerOf(watched: WatchedPage): NetworkTracker {
  const state = watched.state.get(SETTLE);
  if (!state.tracker) {
    state.tracker = new NetworkTracker(watched.page);
    watched.page.addInitScript(INSTALL_OBSERVER).catch(() => undefined);
  }
  return state.tracker;
}

/** Milliseconds still to wait before reading, 0 when the page counts as settled (the policy at the top of this file). */
export function settleDelay(
  probe: Probe,
  network: { busy: boolean; lastActivity: number; lastStart: number; events: number },
  last: LastRead | undefined,
): number {
  if (network.busy || probe.loading) return POLL_MS;
  if (!probe.fresh && last && last.origin === probe.origin && last.count === probe.count && last.events === network.events) return 0;
  // Requests of the load itself report their end a little after the load event; only a request started later is activity after load.
  if (!probe.fresh && probe.loadedAt > 0 && probe.lastChange <= probe.loadedAt && network.lastStart <= probe.loadedAt) {
    return Math.max(0, probe.loadedAt + AFTER_LOAD_MS - probe.now);
  }
  return Math.max(0, Math.max(probe.lastChange, network.lastActivity) + QUIET_MS - probe.now);
}

/**
 * Waits until the main document settled (see the policy above), at most `timeoutMs`;
 * then returns either way, because a page that never settles is still read as it is.
 */
export async function waitForSettledDom(session: Session, timeoutMs: number, callTimeoutMs: number, signal?: AbortSignal): Promise<void> {
  const watched = session.watched;
  const page = watched.page;
  // A session whose registry has no settle watcher (a bare test setup) starts tracking at its first read.
  const tracker = trackerOf(watched);
  const state = watched.state.get(SETTLE);
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return;
    let probe: Probe;
    try {
      probe = await bounded(page.evaluate<Probe>(PROBE), Math.min(remaining, callTimeoutMs), 'waiting for the DOM to settle');
    } catch {
      // The page does not answer (a script loop, or mid-navigation): stop waiting and let the read decide.
      return;
    }
    const network = { busy: tracker.busy(), lastActivity: tracker.lastActivity, lastStart: tracker.lastStart, events: tracker.events };
    const delay = settleDelay(probe, network, state.lastRead);
    if (delay === 0) {
      // The read that follows starts from this state; any change after it makes the next read wait again.
      state.lastRead = { origin: probe.origin, count: probe.count, events: network.events };
      return;
    }
    await sleep(Math.min(delay, POLL_MS, Math.max(0, deadline - Date.now())), signal);
  }
}
