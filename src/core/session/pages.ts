import type { BrowserContext, Page } from 'playwright-core';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.js';
import { withTimeout } from '../operation.js';
import type { EventLog } from './events.js';
import type { FrameRegistry } from './frames.js';
import { WatchedPage, type PageWatcher } from './page.js';
import { applyPagePolicy } from './policy.js';

const CLOSE_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 3_000;

export interface SessionPagesOptions {
  sessionId: string;
  context: BrowserContext;
  frames: FrameRegistry;
  log: EventLog;
  logger: Logger;
  watchers: readonly PageWatcher[];
  /** Whether the session has ended: an ended session's page is not replaced. */
  isClosed: () => boolean;
}

/**
 * The pages a session keeps and their recovery: today one current page, which a crash or a script that never
 * yields gets replaced by a fresh blank page so the session stays usable. Every page is watched the same way.
 */
export class SessionPages {
  private active: WatchedPage;
  private opening = false;
  /** The unresponsive-page check, awaited before the next operation. */
  private probe: Promise<void> | undefined;

  constructor(
    private readonly options: SessionPagesOptions,
    page: Page,
  ) {
    this.active = this.watch(page);
  }

  get current(): WatchedPage {
    return this.active;
  }

  /** Whether a page the context reports is the session's own (a replacement being opened arrives before newPage resolves). */
  owns(page: Page): boolean {
    return page === this.active.page || this.opening;
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

  /** After an operation failed: one that already reported the crash has the page swapped now, so the next is not told again. */
  async afterFailure(err: unknown): Promise<void> {
    if (!this.active.crashed || !(err instanceof ServiceError) || err.code !== 'page_crashed') return;
    await this.replace().catch((replaceErr) =>
      this.options.logger.warn({ err: replaceErr, session: this.options.sessionId }, 'replacing a crashed page failed'),
    );
  }

  /**
   * Called after a navigation or a read timed out: a document whose script never yields (a loop, or dialogs asked in a
   * loop) blocks every later navigation, so when the page does not answer a trivial script it is swapped for a blank
   * page before the next operation.
   */
  checkResponsive(): void {
    const { logger, sessionId } = this.options;
    this.probe = this.replaceIfUnresponsive(PROBE_TIMEOUT_MS).catch((err) =>
      logger.warn({ err, session: sessionId }, 'replacing an unresponsive page failed'),
    );
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
    let page: Page;
    this.opening = true;
    try {
      page = await this.options.context.newPage();
    } finally {
      this.opening = false;
    }
    this.active = this.watch(page);
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
