import type { CDPSession, Frame } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { withTimeout } from '../time.js';
import type { WatchedPage } from './watched.js';

/** Longest any single browser call of the page text may take; a page stuck in a script loop never answers. */
export const DEFAULT_CALL_TIMEOUT_MS = 10_000;

/** A CDP session bound to one frame target, with every call bounded by a deadline. */
export class Cdp {
  constructor(
    readonly session: CDPSession,
    private readonly timeoutMs: number,
    /** The page's crash: a crashed renderer never answers, so calls fail with page_crashed at once instead. */
    readonly crash: Promise<never>,
  ) {}

  /** Loosely typed on purpose: each caller names the few fields it reads. */
  send<T>(method: string, params?: object): Promise<T> {
    const call = (this.session.send as unknown as (m: string, p?: object) => Promise<T>)(method, params);
    return bounded(Promise.race([call, this.crash]), this.timeoutMs, `reading the page (${method})`);
  }
}

/** Rejects with a `timeout` ServiceError when `promise` takes longer than `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  promise.catch(() => undefined);
  return withTimeout(
    promise,
    ms,
    () =>
      new ServiceError(
        'timeout',
        `The page did not answer within ${ms} ms while ${what}; it may be stuck in a script loop or too large. Try again, or navigate away.`,
        { details: { callTimeoutMs: ms, waitingFor: what } },
      ),
  );
}

/** The page's own CDP session (opened when the session started watching the page), with calls bounded by `timeoutMs`. */
export function pageSession(page: WatchedPage, timeoutMs: number): Promise<Cdp> {
  return bounded(Promise.race([page.cdp(), page.crash]), timeoutMs, 'opening a CDP session').then((s) => new Cdp(s, timeoutMs, page.crash));
}

/**
 * The CDP session that can read `frame`: its own target for an out-of-process (cross-site) iframe, otherwise the
 * parent's session (where the frame's worlds are told apart by CDP frame id).
 */
export async function frameSession(frame: Frame, parent: Cdp, timeoutMs: number): Promise<{ cdp: Cdp; detach?: () => Promise<void> }> {
  try {
    const session = await bounded(frame.page().context().newCDPSession(frame), timeoutMs, 'opening a frame CDP session');
    return { cdp: new Cdp(session, timeoutMs, parent.crash), detach: () => session.detach().catch(() => undefined) };
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    // Playwright refuses frames that live in their parent's process: those are read through the parent's session.
    return { cdp: new Cdp(parent.session, timeoutMs, parent.crash) };
  }
}
