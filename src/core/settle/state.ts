import type { Page, Request } from 'playwright-core';
import { stateKey, type WatchedPage } from '../sessions.js';
import { INSTALL_TRACKER } from './page-script.js';

/** A request open longer than this is a long poll or a stalled load, not part of rendering. */
export const STALLED_MS = 3_000;
const IGNORED_TYPES = new Set(['websocket', 'eventsource', 'ping', 'beacon']);

/** The page's requests as Playwright sees them (websockets, EventSource and beacons never count). */
export class NetworkTracker {
  private readonly inflight = new Map<Request, number>();
  lastActivity = 0;
  /** When the latest request started: one started after the load event is the page fetching more, not loading. */
  lastStart = 0;
  /** Counts request starts and ends, so "nothing happened since" is a comparison. */
  events = 0;
  /** When the latest action started (server clock); requests started since are the action's. */
  markAt = 0;
  /** The last start or end of a request started since the mark. */
  lastMarkedActivity = 0;

  constructor(page: Page) {
    page.on('request', (request) => {
      if (IGNORED_TYPES.has(request.resourceType())) return;
      const now = Date.now();
      this.inflight.set(request, now);
      this.touch(now, now);
      this.lastStart = now;
    });
    const done = (request: Request) => {
      const started = this.inflight.get(request);
      if (started === undefined) return;
      this.inflight.delete(request);
      this.touch(Date.now(), started);
    };
    page.on('requestfinished', done);
    page.on('requestfailed', done);
  }

  private touch(now: number, started: number): void {
    this.lastActivity = now;
    this.events++;
    if (this.markAt && started >= this.markAt) this.lastMarkedActivity = now;
  }

  /** Whether a request that matters is open; one open longer than STALLED_MS stops counting. */
  busy(): boolean {
    this.dropStalled();
    return this.inflight.size > 0;
  }

  /** What the requests started since `since` are doing: a document loading, other requests, or nothing. */
  pendingSince(since: number): 'navigation' | 'network' | undefined {
    this.dropStalled();
    let found: 'network' | undefined;
    for (const [request, started] of this.inflight) {
      if (started < since) continue;
      if (request.isNavigationRequest()) return 'navigation';
      found = 'network';
    }
    return found;
  }

  private dropStalled(): void {
    const now = Date.now();
    for (const [request, started] of this.inflight) {
      if (now - started > STALLED_MS) this.inflight.delete(request);
    }
  }
}

/** What the page looked like when it last counted as settled: the next read starts at once when nothing changed since. */
export interface SettledAt {
  origin: number;
  count: number;
  events: number;
}

/** A page's settle state: its network activity, and what the page looked like when last settled. */
export interface SettleState {
  tracker?: NetworkTracker;
  lastSettled?: SettledAt;
}
export const SETTLE = stateKey<SettleState>('snapshot.settle', () => ({}));

/** The page's network tracker, starting it and the in-page tracker (init script) on first use. */
export function trackerOf(watched: WatchedPage): NetworkTracker {
  const state = watched.state.get(SETTLE);
  if (!state.tracker) {
    state.tracker = new NetworkTracker(watched.page);
    watched.page.addInitScript(INSTALL_TRACKER).catch(() => undefined);
  }
  return state.tracker;
}
