import type { BrowserContext, Page } from 'playwright-core';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.js';
import type { HostConnection } from '../hosts/host.js';
import { withTimeout } from '../time.js';
import type { EventLog } from '../page/events.js';
import type { FrameRegistry } from './frames.js';
import { WatchedPage, type PageWatcher } from '../page/watched.js';
import { stopRunawayScript } from '../page/runaway.js';
import { applyPagePolicy } from './policy.js';

const CLOSE_TIMEOUT_MS = 10_000;
/** How long a page that stopped taking a person's input gets to answer before it is replaced. */
const REPLACE_PROBE_MS = 3_000;
/** Codes of a page call that ran out of time: the page may be held by a script of its own. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['timeout', 'action_timeout', 'navigation_timeout']);

/** What became of a page after a call to it timed out: it answered, its script was stopped, or it was replaced. */
type Recovery = 'answered' | 'stopped' | 'replaced';

const RECOVERED: Record<Exclude<Recovery, 'answered'>, string> = {
  stopped:
    'The page was stuck in a script (a loop, a handler that never returns, a selector regex that backtracks): the script was stopped, and the page stays as it was.',
  replaced: 'The page was stuck in a script that could not be stopped, so it was replaced by a blank page: navigate again to continue.',
};

export interface SessionPagesOptions {
  sessionId: string;
  context: BrowserContext;
  /** The browser host connection the context lives on; its loss takes the pages with it. */
  host: HostConnection;
  frames: FrameRegistry;
  log: EventLog;
  logger: Logger;
  watchers: readonly PageWatcher[];
  /** Whether the session has ended: an ended session's page is not replaced. */
  isClosed: () => boolean;
  /** Awaited for a page the session opens itself, before its first navigation (the blocked request types). */
  prepare: (page: Page) => Promise<void>;
}

/** One tab of a session: its id (stable while it is open) and page. */
export interface TabInfo {
  tabId: string;
  url: string;
  active: boolean;
}

/** Most tabs a session keeps; a popup beyond it is closed and reported as under the close policy. */
export const MAX_TABS = 10;

/**
 * The pages a session keeps (its tabs; one unless popups become tabs or newTab opens one) and their recovery: a
 * crashed page or one whose script never yields is replaced by a fresh blank page under the same tab id, so the
 * session stays usable. Every page is watched the same way.
 * A lost browser host is the one loss there is no recovering from: the pages are gone with it.
 */
export class SessionPages {
  private active: WatchedPage;
  private readonly tabs = new Map<string, WatchedPage>();
  private nextTab = 0;
  private opening = false;
  /** The stuck-page check a timed-out call started, awaited before the next operation. */
  private probe: Promise<Recovery> | undefined;
  /** Errors already checked by recoverAfterTimeout (the act step and its operation both pass it the same error). */
  private readonly checked = new WeakSet<object>();

  constructor(
    private readonly options: SessionPagesOptions,
    page: Page,
  ) {
    this.active = this.addTab(page);
  }

  get current(): WatchedPage {
    return this.active;
  }

  /** Whether a page the context reports is the session's own (a replacement or new tab being opened arrives before newPage resolves). */
  owns(page: Page): boolean {
    return this.opening || [...this.tabs.values()].some((tab) => tab.page === page);
  }

  list(): TabInfo[] {
    return [...this.tabs].map(([tabId, tab]) => ({ tabId, url: tab.page.url(), active: tab === this.active }));
  }

  get count(): number {
    return this.tabs.size;
  }

  /** Keeps a popup as a tab (not selected: the caller's page stays the one acted on); false when the tab limit is reached. */
  adopt(page: Page): string | undefined {
    if (this.tabs.size >= MAX_TABS) return undefined;
    const watched = this.addTab(page);
    return this.tabIdOf(watched);
  }

  /** Opens a blank tab and selects it. */
  async open(): Promise<string> {
    if (this.tabs.size >= MAX_TABS)
      throw new ServiceError('invalid_argument', `A session keeps at most ${MAX_TABS} tabs; close one first.`);
    this.opening = true;
    let page: Page;
    try {
      page = await this.options.context.newPage();
    } finally {
      this.opening = false;
    }
    this.active = this.addTab(page);
    await this.options.prepare(page);
    return this.tabIdOf(this.active);
  }

  select(tabId: string): void {
    this.active = this.tab(tabId);
  }

  /** Closes a tab; the last one cannot be closed (a session always has a page). Closing the selected tab selects the newest other. */
  async close(tabId: string): Promise<void> {
    const tab = this.tab(tabId);
    if (this.tabs.size === 1)
      throw new ServiceError('invalid_argument', `Tab ${tabId} is the session's only tab; end the session instead.`);
    this.forget(tab);
    await withTimeout(tab.page.close({ runBeforeUnload: false }), CLOSE_TIMEOUT_MS, () => new Error('page close timed out')).catch(
      () => undefined,
    );
  }

  private tab(tabId: string): WatchedPage {
    const tab = this.tabs.get(tabId);
    if (!tab) throw new ServiceError('invalid_argument', `No tab "${tabId}"; the tabs are ${[...this.tabs.keys()].join(', ')}.`);
    return tab;
  }

  private tabIdOf(watched: WatchedPage): string {
    for (const [tabId, tab] of this.tabs) if (tab === watched) return tabId;
    throw new Error('page is not a tab of the session');
  }

  private addTab(page: Page, tabId = `t${this.nextTab++}`): WatchedPage {
    const watched = this.watch(page);
    this.tabs.set(tabId, watched);
    // A page that closes itself (window.close()) leaves the tabs; the session keeps a page.
    page.once('close', () => {
      if (this.tabs.get(tabId) === watched && this.tabs.size > 1) this.forget(watched);
    });
    return watched;
  }

  private forget(watched: WatchedPage): void {
    this.tabs.delete(this.tabIdOf(watched));
    if (this.active === watched) this.active = [...this.tabs.values()].at(-1)!;
  }

  /** "local", or the browser host endpoint without credentials. */
  get hostName(): string {
    return this.options.host.hostName;
  }

  /** `browser_unavailable` once the browser host the pages lived on was lost, else undefined. */
  hostLoss(): ServiceError | undefined {
    return this.options.host.lost();
  }

  /** Settles like `work`, or fails with `browser_unavailable` as soon as the host is lost, whatever `work` waits for. */
  async unlessHostLost<T>(work: () => Promise<T>): Promise<T> {
    const lost = this.hostLoss();
    if (lost) throw lost;
    try {
      return await this.options.host.race(work());
    } catch (err) {
      // Playwright fails the pending calls a moment before it reports the lost connection: say what happened.
      await new Promise((resolve) => setTimeout(resolve, 0));
      throw this.hostLoss() ?? err;
    }
  }

  /** Before an operation: waits for a pending responsiveness check. */
  async settleProbe(): Promise<void> {
    await this.probe;
    this.probe = undefined;
  }

  /** A crashed page is replaced by a fresh one before the next operation, which is told once. */
  async recoverFromCrash(): Promise<void> {
    if (!this.active.crashed) return;
    await this.replace();
    throw new ServiceError(
      'page_crashed',
      'The page crashed (out of memory or a renderer fault). The session now has a fresh blank page; navigate again to continue.',
    );
  }

  /**
   * After an operation failed, the error to answer: one that already reported the crash has the page swapped now, so
   * the next is not told again; a timeout has the page freed at once (recoverAfterTimeout).
   */
  async afterFailure(err: unknown): Promise<unknown> {
    if (!this.active.crashed || !(err instanceof ServiceError) || err.code !== 'page_crashed') return this.recoverAfterTimeout(err);
    await this.replace().catch((replaceErr) =>
      this.options.logger.warn({ err: replaceErr, session: this.options.sessionId }, 'replacing a crashed page failed'),
    );
    return err;
  }

  /**
   * After a page call timed out, before its error is answered: a page held by a script of its own (a loop, a handler
   * that never returns, a regex that backtracks) has that script stopped, or is replaced when it cannot be, so the next
   * call finds a page that answers. The error comes back saying which; any other error, as it was.
   */
  async recoverAfterTimeout(err: unknown): Promise<unknown> {
    if (!(err instanceof ServiceError) || !TIMEOUT_CODES.has(err.code) || this.checked.has(err)) return err;
    const pending = this.probe;
    this.probe = undefined;
    const recovery = await (pending ?? this.unstick());
    if (recovery === 'answered') {
      this.checked.add(err);
      return err;
    }
    const told = new ServiceError(err.code, `${err.message} ${RECOVERED[recovery]}`, {
      details: { ...(err.details && typeof err.details === 'object' ? err.details : {}), page: recovery },
      cause: err,
    });
    this.checked.add(told);
    return told;
  }

  /**
   * Called after a navigation or a read timed out: a document whose script never yields (a loop, or dialogs asked in a
   * loop) blocks every later call, so its script is stopped, or the page swapped for a blank one, before the next
   * operation (or before the error is answered, by recoverAfterTimeout).
   */
  checkResponsive(): void {
    this.probe = this.unstick();
  }

  /**
   * Called when a person's live-view input was not taken: input still queued for the page would run the script that
   * holds it again after a stop (a handler of mouse moves), so a page that does not answer is replaced, not stopped.
   */
  replaceWhenUnresponsive(): void {
    const { logger, sessionId } = this.options;
    this.probe = this.replaceIfUnresponsive(REPLACE_PROBE_MS).then(
      () => 'answered' as const,
      (err: unknown) => (logger.warn({ err, session: sessionId }, 'replacing an unresponsive page failed'), 'answered' as const),
    );
  }

  /** Stops the script that holds the active page, or replaces the page when that does not free it; never rejects. */
  private async unstick(): Promise<Recovery> {
    const { log, logger, sessionId, isClosed } = this.options;
    const watched = this.active;
    try {
      const check = await stopRunawayScript(watched);
      if (check === 'answered' || watched !== this.active || isClosed()) return 'answered';
      const url = watched.page.url();
      if (check === 'stopped') {
        log.record({ type: 'unresponsive', message: 'A script held the page (it never yielded) and was stopped; the page stays.', url });
        logger.warn({ session: sessionId }, 'page held by a script; the script was stopped');
        return 'stopped';
      }
      log.record({
        type: 'unresponsive',
        message: 'The page stopped responding (a script that never yields); the session continues on a fresh blank page.',
        url,
      });
      logger.warn({ session: sessionId }, 'page unresponsive; replaced');
      await this.replace();
      return 'replaced';
    } catch (err) {
      logger.warn({ err, session: sessionId }, 'freeing an unresponsive page failed');
      return 'answered';
    }
  }

  /**
   * Before a navigation of the main frame: a page whose script started looping after it loaded (no timeout was seen)
   * would hold that navigation for its whole timeout. Leaving the page anyway, the session loses nothing but its
   * history when a page that does not answer within `ms` is swapped first.
   */
  async replaceIfUnresponsive(ms: number): Promise<void> {
    const { log, logger, sessionId, isClosed } = this.options;
    const watched = this.active;
    const answer = answersScript(watched);
    answer.catch(() => undefined);
    const answered = await withTimeout(answer, ms, () => new Error('no answer')).catch(() => false);
    if (answered || watched !== this.active || isClosed()) return;
    log.record({
      type: 'unresponsive',
      message: 'The page stopped responding (a script that never yields); the session continues on a fresh blank page.',
      url: watched.page.url(),
    });
    logger.warn({ session: sessionId }, 'page unresponsive; replaced');
    await this.replace();
  }

  private async replace(): Promise<void> {
    const old = this.active.page;
    const tabId = this.tabIdOf(this.active);
    let page: Page;
    this.opening = true;
    try {
      page = await this.options.context.newPage();
    } finally {
      this.opening = false;
    }
    this.active = this.addTab(page, tabId);
    await this.options.prepare(page);
    await withTimeout(old.close({ runBeforeUnload: false }), CLOSE_TIMEOUT_MS, () => new Error('page close timed out')).catch(
      () => undefined,
    );
  }

  /** Everything a page of the session gets: crash tracking and CDP session, frame ids, policy, the features' watchers. */
  private watch(page: Page): WatchedPage {
    const { frames, log, logger, sessionId, watchers } = this.options;
    const watched = new WatchedPage(page);
    frames.watch(page);
    applyPagePolicy(page, log);
    page.on('crash', () => {
      log.record({ type: 'crash', message: 'The page crashed.', url: page.url() });
      logger.warn({ session: sessionId }, 'page crashed');
    });
    for (const watcher of watchers) watcher(watched);
    return watched;
  }
}

/**
 * Whether the page's current document runs a trivial script. Raw CDP, because Playwright's evaluate waits for a
 * pending navigation's new document, so a page merely waiting for a slow server would look hung.
 */
async function answersScript(watched: WatchedPage): Promise<boolean> {
  const cdp = await watched.cdp();
  await cdp.send('Runtime.evaluate', { expression: '1', returnByValue: true });
  return true;
}
