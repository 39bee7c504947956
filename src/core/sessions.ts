import { randomBytes } from 'node:crypto';
import type { BrowserContext, Dialog, Frame, Page } from 'playwright-core';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { BrowserManager } from './browser.js';
import type { Egress } from './egress/index.js';
import { ServiceError } from './errors.js';
import { withTimeout } from './operation.js';

/** Something a hostile or busy page did that the session handled by policy. */
export interface PageEvent {
  seq: number;
  type: 'dialog' | 'popup' | 'crash' | 'download' | 'unresponsive' | 'blocked';
  message: string;
  /** For `blocked`: how many requests were refused. */
  count?: number;
  url?: string;
  at: string;
}

export const PageEventSchema = z.object({
  seq: z.number(),
  type: z.enum(['dialog', 'popup', 'crash', 'download', 'unresponsive', 'blocked']),
  message: z.string(),
  count: z.number().optional().describe('For "blocked": how many requests the egress policy refused.'),
  url: z.string().optional(),
  at: z.string(),
});

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

const MAX_EVENTS = 50;

/** Features that must watch a page from its first navigation (e.g. the page text's network and DOM-settle tracking). */
const pageWatchers: Array<(session: Session, page: Page) => void> = [];
export function watchSessionPages(watcher: (session: Session, page: Page) => void): void {
  pageWatchers.push(watcher);
}
const CLOSE_TIMEOUT_MS = 10_000;

const crashes = new WeakMap<Page, Promise<never>>();
/**
 * Rejects with `page_crashed` once a session's page crashes. Raw CDP calls to a crashed renderer never answer
 * (Playwright's own calls do fail), so work that sends them races this instead of waiting out its timeout.
 */
export function whenCrashed(page: Page): Promise<never> {
  return crashes.get(page) ?? new Promise<never>(() => undefined);
}
function trackCrash(page: Page): void {
  const crash = new Promise<never>((_, reject) =>
    page.once('crash', () =>
      reject(
        new ServiceError(
          'page_crashed',
          'The page crashed (out of memory or a renderer fault) while it was being read. The session now has a fresh blank page; navigate again to continue.',
        ),
      ),
    ),
  );
  crash.catch(() => undefined);
  crashes.set(page, crash);
}
const PROBE_TIMEOUT_MS = 3_000;

/** One isolated browser session: a BrowserContext with one page, owned by one caller. */
export class Session {
  readonly createdAt = new Date();
  lastUsedAt = new Date();
  /** Set once the session can no longer be used; the message says why. */
  closedReason: string | undefined;
  readonly events: PageEvent[] = [];
  /** Per-feature state (e.g. the element refs of the last page text), keyed by the feature. */
  readonly state = new Map<string, unknown>();
  private eventSeq = 0;
  private reportedSeq = 0;
  private frameIds = new WeakMap<Frame, string>();
  private framesById = new Map<string, WeakRef<Frame>>();
  private nextFrameId = 0;
  private queue: Promise<void> = Promise.resolve();
  private busy = 0;
  private crashed = false;
  private openingPage = false;
  private probe: Promise<void> | undefined;

  constructor(
    readonly id: string,
    readonly owner: string,
    readonly context: BrowserContext,
    public page: Page,
    private readonly logger: Logger,
  ) {
    this.watchContext();
    this.watchPage(page);
  }

  get isBusy(): boolean {
    return this.busy > 0;
  }

  /** A short, stable id for a frame of this session; the main frame of the first page is "0". */
  frameId(frame: Frame): string {
    let id = this.frameIds.get(frame);
    if (id === undefined) {
      id = String(this.nextFrameId++);
      this.frameIds.set(frame, id);
      this.framesById.set(id, new WeakRef(frame));
    }
    return id;
  }

  /** The live frame with this id, or a `frame_not_found` error. */
  frame(id: string): Frame {
    const frame = this.framesById.get(id)?.deref();
    if (!frame || frame.isDetached() || frame.page() !== this.page) {
      throw new ServiceError(
        'frame_not_found',
        `No frame with id "${id}" in this session's page. Frame ids come from session_start and session_list (frames) and from the page text.`,
      );
    }
    return frame;
  }

  recordEvent(event: Omit<PageEvent, 'seq' | 'at'>): void {
    this.events.push({ ...event, seq: ++this.eventSeq, at: new Date().toISOString() });
    if (this.events.length > MAX_EVENTS) this.events.shift();
  }

  /** Events recorded after `seq`, for reporting what happened during one operation. */
  eventsSince(seq: number): PageEvent[] {
    return this.events.filter((event) => event.seq > seq);
  }

  /** Events no operation has reported yet; a popup, for one, surfaces only after the page that opened it has loaded. */
  takeUnreportedEvents(): PageEvent[] {
    const events = this.eventsSince(this.reportedSeq);
    this.reportedSeq = this.eventSeq;
    return events;
  }

  get lastEventSeq(): number {
    return this.eventSeq;
  }

  get reportedEventSeq(): number {
    return this.reportedSeq;
  }

  /** Runs `work` after every earlier operation on this session has finished. */
  async runExclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise<void>((resolve) => (release = resolve));
    this.busy++;
    try {
      await previous;
      await this.probe;
      this.probe = undefined;
      if (this.closedReason) throw new ServiceError('session_closed', this.closedReason);
      await this.recoverFromCrash();
      this.lastUsedAt = new Date();
      return await work().catch(async (err: unknown) => {
        // The operation already told the caller about the crash; swap the page now so the next one is not told again.
        if (this.crashed && err instanceof ServiceError && err.code === 'page_crashed') {
          this.crashed = false;
          await this.replacePage().catch((replaceErr) =>
            this.logger.warn({ err: replaceErr, session: this.id }, 'replacing a crashed page failed'),
          );
        }
        throw err;
      });
    } finally {
      this.busy--;
      this.lastUsedAt = new Date();
      release();
    }
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
      recentEvents: this.events.slice(-10),
    };
  }

  async close(reason: string): Promise<void> {
    if (this.closedReason) return;
    this.closedReason = reason;
    await withTimeout(this.context.close(), CLOSE_TIMEOUT_MS, () => new Error('context close timed out')).catch((err) =>
      this.logger.warn({ err, session: this.id }, 'closing the browser context failed'),
    );
  }

  /** A crashed page is replaced by a fresh one so the session stays usable; the crash is reported once. */
  private async recoverFromCrash(): Promise<void> {
    if (!this.crashed) return;
    this.crashed = false;
    await this.replacePage();
    throw new ServiceError(
      'page_crashed',
      'The page crashed (out of memory or a renderer fault). The session now has a fresh blank page; navigate again to continue.',
    );
  }

  /**
   * Called after a navigation timed out (and, if it had not committed, was stopped): a document whose script never
   * yields (a loop, or dialogs asked in a loop) blocks every later navigation, so when the page does not answer a
   * trivial script it is swapped for a blank page before the next operation.
   */
  checkResponsive(): void {
    const page = this.page;
    const answer = answersScript(page);
    answer.catch(() => undefined);
    this.probe = withTimeout(answer, PROBE_TIMEOUT_MS, () => new Error('no answer'))
      .catch(() => false)
      .then(async (answered) => {
        if (answered || page !== this.page || this.closedReason) return;
        this.recordEvent({
          type: 'unresponsive',
          message: 'The page stopped responding (a script that never yields); the session continues on a fresh blank page.',
          url: page.url(),
        });
        this.logger.warn({ session: this.id }, 'page unresponsive; replaced');
        await this.replacePage();
      })
      .catch((err) => this.logger.warn({ err, session: this.id }, 'replacing an unresponsive page failed'));
  }

  private async replacePage(): Promise<void> {
    const old = this.page;
    this.openingPage = true;
    try {
      this.page = await this.context.newPage();
    } finally {
      this.openingPage = false;
    }
    this.watchPage(this.page);
    await withTimeout(old.close({ runBeforeUnload: false }), CLOSE_TIMEOUT_MS, () => new Error('page close timed out')).catch(
      () => undefined,
    );
  }

  private watchContext(): void {
    this.context.on('page', (popup) => {
      // The replacement for a crashed page also arrives here, before newPage() resolves; it is not a popup.
      if (popup === this.page || this.openingPage) return;
      // Popups would steal focus from the session's page: close them and say where they went.
      const url = popup.url();
      this.recordEvent({ type: 'popup', message: 'A popup window was closed by policy; navigate to its URL to follow it.', url });
      popup.close().catch(() => undefined);
    });
  }

  private watchPage(page: Page): void {
    trackCrash(page);
    for (const watcher of pageWatchers) watcher(this, page);
    page.on('dialog', (dialog) => this.handleDialog(dialog));
    page.on('crash', () => {
      this.crashed = true;
      this.recordEvent({ type: 'crash', message: 'The page crashed.', url: page.url() });
      this.logger.warn({ session: this.id }, 'page crashed');
    });
    page.on('download', (download) => {
      this.recordEvent({ type: 'download', message: 'A download was refused by policy.', url: download.url() });
      download.cancel().catch(() => undefined);
    });
    this.frameId(page.mainFrame());
    page.on('frameattached', (frame) => this.frameId(frame));
    // Ad-heavy pages attach and drop frames all the time; forget the ids of those that are gone.
    page.on('framedetached', (frame) => {
      const id = this.frameIds.get(frame);
      if (id !== undefined) this.framesById.delete(id);
    });
  }

  /** Dialogs never block: alerts and beforeunload are accepted, confirm and prompt dismissed. */
  private handleDialog(dialog: Dialog): void {
    const type = dialog.type();
    const accept = type === 'alert' || type === 'beforeunload';
    // The page that asked, which may be one just replaced, not the session's current page.
    this.recordEvent({
      type: 'dialog',
      message: `${type} "${dialog.message().slice(0, 200)}" was ${accept ? 'accepted' : 'dismissed'} by policy.`,
      url: (dialog.page() ?? this.page).url(),
    });
    (accept ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
  }
}

export interface SessionRegistryOptions {
  maxSessions: number;
  sessionIdleTimeoutMs: number;
  logger: Logger;
  /** Gives each context its egress proxy when the policy filters. */
  egress?: Egress;
}

/** All live sessions: creation with limits, lookup scoped by owner, serial execution, idle expiry. */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private starting = 0;
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(
    private readonly browser: BrowserManager,
    private readonly options: SessionRegistryOptions,
  ) {
    const every = Math.max(50, Math.min(60_000, Math.floor(options.sessionIdleTimeoutMs / 4)));
    this.sweeper = setInterval(() => void this.expireIdle(), every);
    this.sweeper.unref();
    browser.onDisconnect(() => this.dropAll('The browser process exited; this session is gone. Start a new session.'));
  }

  get size(): number {
    return this.sessions.size;
  }

  private openCount(): number {
    let open = 0;
    for (const session of this.sessions.values()) if (!session.closedReason) open++;
    return open;
  }

  get idleTimeoutMs(): number {
    return this.options.sessionIdleTimeoutMs;
  }

  async start(owner: string): Promise<Session> {
    if (this.closing) throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    if (this.openCount() + this.starting >= this.options.maxSessions) {
      throw new ServiceError(
        'session_limit',
        `The server already has ${this.options.maxSessions} open sessions (--max-sessions). End a session with session_end and try again.`,
      );
    }
    this.starting++;
    try {
      const egress = await this.options.egress?.openContext();
      const context = await this.newContext(egress?.contextOptions).catch(async (err: unknown) => {
        await egress?.proxy.close();
        throw err;
      });
      try {
        const page = await context.newPage();
        const session = new Session(newSessionId(), owner, context, page, this.options.logger);
        egress?.attach(session);
        this.sessions.set(session.id, session);
        this.options.logger.info({ session: session.id, open: this.sessions.size }, 'session started');
        return session;
      } catch (err) {
        await context.close().catch(() => undefined);
        await egress?.proxy.close();
        throw err;
      }
    } finally {
      this.starting--;
    }
  }

  private async newContext(extra: { proxy: { server: string } } | undefined): Promise<BrowserContext> {
    const options = { acceptDownloads: false, viewport: { width: 1280, height: 800 }, ...extra };
    const browser = await this.browser.get();
    try {
      return await browser.newContext(options);
    } catch (err) {
      if (browser.isConnected())
        throw new ServiceError(
          'browser_unavailable',
          `Could not open a browser context: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
          { cause: err },
        );
      // The browser died between launch and use; relaunch once.
      return (await this.browser.get()).newContext(options);
    }
  }

  /** The session with this id if `owner` may see it; other owners get the same not-found error, so ids cannot be probed. */
  get(id: string, owner: string): Session {
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner) {
      throw new ServiceError(
        'session_not_found',
        `No session with id "${id}". It may have ended or expired after being idle; start a new one with session_start.`,
      );
    }
    if (session.closedReason) throw new ServiceError('session_closed', session.closedReason);
    return session;
  }

  list(owner: string): Session[] {
    return [...this.sessions.values()].filter((session) => session.owner === owner && !session.closedReason);
  }

  /** Runs an operation on a session after the operations queued before it. */
  run<T>(id: string, owner: string, work: (session: Session) => Promise<T>): Promise<T> {
    const session = this.get(id, owner);
    return session.runExclusive(() => work(session));
  }

  async end(id: string, owner: string): Promise<void> {
    const session = this.get(id, owner);
    this.sessions.delete(id);
    await session.close('This session was ended.');
    this.options.logger.info({ session: id, open: this.sessions.size }, 'session ended');
  }

  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.close('The server shut down.')));
  }

  private async expireIdle(): Promise<void> {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.isBusy || now - session.lastUsedAt.getTime() < this.options.sessionIdleTimeoutMs) continue;
      this.sessions.delete(session.id);
      this.options.logger.info({ session: session.id }, 'session expired after being idle');
      await session.close('This session expired after being idle.');
    }
  }

  private dropAll(reason: string): void {
    for (const session of this.sessions.values()) session.closedReason ??= reason;
    // Keep them one sweep so callers get the clear reason instead of not-found; the contexts died with the browser.
    setTimeout(() => {
      for (const [id, session] of this.sessions) if (session.closedReason === reason) this.sessions.delete(id);
    }, 60_000).unref();
  }
}

/**
 * Whether the page's current document runs a trivial script. Raw CDP, because Playwright's evaluate waits for a
 * pending navigation's new document, so a page merely waiting for a slow server would look hung.
 */
async function answersScript(page: Page): Promise<boolean> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await cdp.send('Runtime.evaluate', { expression: '1', returnByValue: true });
    return true;
  } finally {
    cdp.detach().catch(() => undefined);
  }
}

/** 160 random bits, URL-safe. */
export function newSessionId(): string {
  return randomBytes(20).toString('base64url');
}
