import type { Page, Request } from 'playwright-core';
import { sleep } from '../operation.js';
import type { Session } from '../sessions.js';
import { bounded } from './cdp.js';

/** How long the DOM and the network must stay still to count as settled. */
const QUIET_MS = 300;
/** A request open longer than this is a long poll or a stalled load, not part of rendering. */
const STALLED_MS = 3_000;
const POLL_MS = 50;
const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'ping', 'beacon']);
const SETTLE_KEY = 'bsm.settle';

/** In every document from its start: records the time of the last structural DOM change. Strings, so no bundler helper leaks into the page. */
const INSTALL_OBSERVER = `(() => {
  const slot = Symbol.for(${JSON.stringify(SETTLE_KEY)});
  if (window[slot]) return false;
  const state = { last: performance.now() };
  window[slot] = state;
  new MutationObserver(() => { state.last = performance.now(); }).observe(document, { subtree: true, childList: true, characterData: true });
  return true;
})()`;
/** Milliseconds since the last DOM change; 0 when the observer had to be installed just now or the document is still loading. */
const DOM_QUIET_FOR = `(() => {
  if (${INSTALL_OBSERVER}) return 0;
  return document.readyState === 'loading' ? 0 : performance.now() - window[Symbol.for(${JSON.stringify(SETTLE_KEY)})].last;
})()`;

class NetworkTracker {
  private readonly inflight = new Map<Request, number>();
  private lastActivity = Date.now();

  constructor(page: Page) {
    page.on('request', (request) => {
      if (IGNORED_TYPES.has(request.resourceType())) return;
      this.inflight.set(request, Date.now());
      this.lastActivity = Date.now();
    });
    const done = (request: Request) => {
      if (this.inflight.delete(request)) this.lastActivity = Date.now();
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
  }

  /** Milliseconds the network has been quiet, 0 while a request that matters is open. */
  quietFor(): number {
    const now = Date.now();
    for (const [request, started] of this.inflight) {
      if (now - started > STALLED_MS) this.inflight.delete(request);
    }
    return this.inflight.size > 0 ? 0 : now - this.lastActivity;
  }
}

const trackers = new WeakMap<Page, NetworkTracker>();

/** Starts watching a page; called for every page of every session from its creation. */
export function watchPage(page: Page): void {
  if (trackers.has(page)) return;
  trackers.set(page, new NetworkTracker(page));
  page.addInitScript(INSTALL_OBSERVER).catch(() => undefined);
}

/**
 * Waits until the main document stopped changing and the network is quiet, at most `timeoutMs`;
 * then returns either way, because a page that never settles is still read as it is.
 */
export async function waitForSettledDom(session: Session, timeoutMs: number, callTimeoutMs: number, signal?: AbortSignal): Promise<void> {
  const page = session.page;
  watchPage(page);
  const tracker = trackers.get(page)!;
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return;
    let domQuiet: number;
    try {
      domQuiet = await bounded(page.evaluate<number>(DOM_QUIET_FOR), Math.min(remaining, callTimeoutMs), 'waiting for the DOM to settle');
    } catch {
      // The page does not answer (a script loop, or mid-navigation): stop waiting and let the read decide.
      return;
    }
    if (domQuiet >= QUIET_MS && tracker.quietFor() >= QUIET_MS) return;
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), signal);
  }
}
