import type { BrowserContext, Frame, Page } from 'playwright-core';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import { withTimeout } from '../operation.js';
import { EventLog, PageEventSchema, type PageEvent } from './events.js';
import { FrameRegistry } from './frames.js';
import { WatchedPage, type PageWatcher } from './page.js';
import { applyPagePolicy, closePopup } from './policy.js';
import { OperationQueue } from './queue.js';
import { FeatureState } from './state.js';

export const FrameInfoSchema = z.object({
  frameId: z.string().describe('Pass as frameId to navigate to load a URL in this frame.'),
  url: z.string(),
  name: z.string().describe('The frame\'s name attribute, "" when unnamed.'),
  parentFrameId: z.string().nullable().describe('null for the main frame.'),
});

export const SessionInfoSchema = z.object({
  id: z.string().describe('Session id; pass it to every other operation.'),
  mainFrameId: z.string().describe('Frame id of the top-level frame.'),
  url: z.string().describe('Current URL of the page.'),
  frames: z.array(FrameInfoSchema).describe('Every frame of the page, main frame first.'),
  createdAt: z.string(),
  lastUsedAt: z.string(),
  expiresAt: z.string().describe('When the session ends if it stays idle.'),
  recentEvents: z.array(PageEventSchema).describe('Dialogs, popups and crashes the session handled, newest last.'),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

const CLOSE_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 3_000;

export interface SessionOptions {
  id: string;
  owner: string;
  context: BrowserContext;
  page: Page;
  logger: Logger;
  /** Called for every page the session keeps, from its creation on. */
  watchers: readonly PageWatcher[];
}

/** One isolated browser session: a BrowserContext and its page, owned by one caller, with its operations in one queue. */
export class Session {
  readonly id: string;
  readonly owner: string;
  readonly context: BrowserContext;
  readonly createdAt = new Date();
  lastUsedAt = new Date();
  /** Set once the session can no longer be used; the message says why. */
  closedReason: string | undefined;
  /** What the pages did that the session handled by policy (dialogs, popups, crashes...). */
  readonly log = new EventLog();
  readonly frames = new FrameRegistry();
  /** Per-feature state that outlives the page (a page's own state is on `current.state`). */
  readonly state = new FeatureState();
  private current: WatchedPage;
  private readonly queue = new OperationQueue();
  private readonly logger: Logger;
  private readonly watchers: readonly PageWatcher[];
  private openingPage = false;
  /** The unresponsive-page check, awaited before the next operation. */
  private probe: Promise<void> | undefined;

  constructor(options: SessionOptions) {
    ({ id: this.id, owner: this.owner, context: this.context, logger: this.logger, watchers: this.watchers } = options);
    this.context.on('page', (popup) => {
      // The replacement for a crashed page also arrives here, before newPage() resolves; it is not a popup.
      if (popup === this.page || this.openingPage) return;
      closePopup(popup, this.log);
    });
    this.current = this.watch(options.page);
  }

  /** The page operations act on. */
  get page(): Page {
    return this.current.page;
  }

  /** The watched page operations act on: its CDP session, crash and per-page feature state. */
  get watched(): WatchedPage {
    return this.current;
  }

  get events(): readonly PageEvent[] {
    return this.log.all;
  }

  get lastEventSeq(): number {
    return this.log.lastSeq;
  }

  eventsSince(seq: number): PageEvent[] {
    return this.log.since(seq);
  }

  get isBusy(): boolean {
    return this.queue.isBusy;
  }

  /** A short, stable id for a frame of this session; the main frame of the first page is "0". */
  frameId(frame: Frame): string {
    return this.frames.idOf(frame);
  }

  /** The live frame with this id on the session's page, or a `frame_not_found` error. */
  frame(id: string): Frame {
    return this.frames.find(id, this.page);
  }

  /** Runs `work` after every earlier operation on this session has finished; a crashed or hung page is replaced first. */
  runExclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      try {
        await this.probe;
        this.probe = undefined;
        if (this.closedReason) throw new ServiceError('session_closed', this.closedReason);
        await this.recoverFromCrash();
        this.lastUsedAt = new Date();
        return await work().catch(async (err: unknown) => {
          // The operation already told the caller about the crash; swap the page now so the next one is not told again.
          if (this.current.crashed && err instanceof ServiceError && err.code === 'page_crashed') {
            await this.replacePage().catch((replaceErr) =>
              this.logger.warn({ err: replaceErr, session: this.id }, 'replacing a crashed page failed'),
            );
          }
          throw err;
        });
      } finally {
        this.lastUsedAt = new Date();
      }
    });
  }

  info(idleTimeoutMs: number): SessionInfo {
    return {
      id: this.id,
      mainFrameId: this.frameId(this.page.mainFrame()),
      url: this.page.url(),
      frames: this.page.frames().map((frame) => {
        const parent = frame.parentFrame();
        return { frameId: this.frameId(frame), url: frame.url(), name: frame.name(), parentFrameId: parent ? this.frameId(parent) : null };
      }),
      createdAt: this.createdAt.toISOString(),
      lastUsedAt: this.lastUsedAt.toISOString(),
      expiresAt: new Date(this.lastUsedAt.getTime() + idleTimeoutMs).toISOString(),
      recentEvents: this.log.all.slice(-10),
    };
  }

  async close(reason: string): Promise<void> {
    if (this.closedReason) return;
    this.closedReason = reason;
    await withTimeout(this.context.close(), CLOSE_TIMEOUT_MS, () => new Error('context close timed out')).catch((err) =>
      this.logger.warn({ err, session: this.id }, 'closing the browser context failed'),
    );
  }

  /**
   * Called after a navigation or a read timed out: a document whose script never yields (a loop, or dialogs asked in a
   * loop) blocks every later navigation, so when the page does not answer a trivial script it is swapped for a blank
   * page before the next operation.
   */
  checkResponsive(): void {
    const watched = this.current;
    const answer = answersScript(watched);
    answer.catch(() => undefined);
    this.probe = withTimeout(answer, PROBE_TIMEOUT_MS, () => new Error('no answer'))
      .catch(() => false)
      .then(async (answered) => {
        if (answered || watched !== this.current || this.closedReason) return;
        this.log.record({
          type: 'unresponsive',
          message: 'The page stopped responding (a script that never yields); the session continues on a fresh blank page.',
          url: watched.page.url(),
        });
        this.logger.warn({ session: this.id }, 'page unresponsive; replaced');
        await this.replacePage();
      })
      .catch((err) => this.logger.warn({ err, session: this.id }, 'replacing an unresponsive page failed'));
  }

  /** A crashed page is replaced by a fresh one so the session stays usable; the crash is reported once. */
  private async recoverFromCrash(): Promise<void> {
    if (!this.current.crashed) return;
    await this.replacePage();
    throw new ServiceError(
      'page_crashed',
      'The page crashed (out of memory or a renderer fault). The session now has a fresh blank page; navigate again to continue.',
    );
  }

  private async replacePage(): Promise<void> {
    const old = this.current.page;
    let page: Page;
    this.openingPage = true;
    try {
      page = await this.context.newPage();
    } finally {
      this.openingPage = false;
    }
    this.current = this.watch(page);
    await withTimeout(old.close({ runBeforeUnload: false }), CLOSE_TIMEOUT_MS, () => new Error('page close timed out')).catch(
      () => undefined,
    );
  }

  /** Everything a page of this session gets: crash tracking and CDP session, frame ids, policy, the features' watchers. */
  private watch(page: Page): WatchedPage {
    const watched = new WatchedPage(page);
    this.frames.watch(page);
    applyPagePolicy(page, this.log);
    page.on('crash', () => {
      this.log.record({ type: 'crash', message: 'The page crashed.', url: page.url() });
      this.logger.warn({ session: this.id }, 'page crashed');
    });
    for (const watcher of this.watchers) watcher(watched);
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
