import type { BrowserContext, Frame, Page } from 'playwright-core';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import type { HostConnection } from '../hosts/host.js';
import { withTimeout } from '../time.js';
import type { RequestBlocker } from './blocking.js';
import { SessionRecording } from '../recording/recording.js';
import { EventLog, PageEventSchema, type PageEvent } from '../page/events.js';
import { FrameRegistry } from './frames.js';
import type { PageWatcher, WatchedPage } from '../page/watched.js';
import { SessionPages } from './pages.js';
import { closePopup } from './policy.js';
import { redactOptions, SessionOptions } from './options.js';
import { OperationQueue } from './queue.js';
import { FeatureState } from '../page/state.js';

export const FrameInfoSchema = z.object({
  frameId: z.string().describe('Pass as frameId to navigate to load a URL in this frame.'),
  url: z.string(),
  name: z.string().describe('The frame\'s name attribute, "" when unnamed.'),
  parentFrameId: z.string().nullable().describe('null for the main frame.'),
});

export const TabInfoSchema = z.object({
  tabId: z.string().describe('Pass to act selectTab / closeTab.'),
  url: z.string(),
  active: z.boolean(),
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
  host: z.string().describe('Where the browser runs: "local", or the browser host endpoint without credentials.'),
  state: z
    .enum(['open', 'lost'])
    .describe('lost: the browser host went away with the pages; operations answer browser_unavailable; end it with session_end.'),
  tabs: z.array(TabInfoSchema).describe('The pages of the session; operations act on the active one.'),
  options: SessionOptions.describe('The options the session was started with; the proxy password and header values show as "***".'),
  blockedRequests: z.number().optional().describe('Requests blocked by blockResources / blockUrls so far.'),
});
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

const CLOSE_TIMEOUT_MS = 10_000;

/** What a Session is made of (its start options are `startOptions`). */
export interface SessionInit {
  id: string;
  owner: string;
  context: BrowserContext;
  /** The browser host connection the context was opened on. */
  host: HostConnection;
  page: Page;
  logger: Logger;
  /** Called for every page the session keeps, from its creation on. */
  watchers: readonly PageWatcher[];
  /** What a popup becomes: closed and reported, or a tab. */
  popups: 'close' | 'tab';
  /** The session_start options in force. */
  startOptions?: SessionOptions;
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
  /** What the pages did that the session handled by policy (dialogs, popups, crashes...), the session's secrets masked. */
  readonly log = new EventLog((text) => this.recording.secrets.mask(text));
  readonly frames = new FrameRegistry();
  /** Per-feature state that outlives a page (a page's own state is on `watched.state`). */
  readonly state = new FeatureState();
  readonly pages: SessionPages;
  /** The action log, the secrets it masks, and the trace when the session is recorded. */
  readonly recording = new SessionRecording();
  private readonly queue = new OperationQueue();
  private readonly closeHooks: Array<() => Promise<void>> = [];
  private readonly logger: Logger;

  /** The session_start options in force (shown redacted in SessionInfo). */
  readonly startOptions: SessionOptions;
  /** What blocks its blockResources / blockUrls requests, when it has any. */
  blocker: RequestBlocker | undefined;

  constructor(options: SessionInit) {
    ({ id: this.id, owner: this.owner, context: this.context, logger: this.logger } = options);
    this.startOptions = options.startOptions ?? {};
    this.pages = new SessionPages(
      {
        sessionId: this.id,
        context: this.context,
        host: options.host,
        frames: this.frames,
        log: this.log,
        logger: this.logger,
        watchers: options.watchers,
        isClosed: () => this.closedReason !== undefined,
        prepare: (page) => this.blocker?.ready(page) ?? Promise.resolve(),
      },
      options.page,
    );
    this.context.on('page', (popup) => {
      if (this.pages.owns(popup)) return;
      const tabId = options.popups === 'tab' ? this.pages.adopt(popup) : undefined;
      if (tabId === undefined) closePopup(popup, this.log);
      else
        this.log.record({
          type: 'popup',
          message: `A popup opened as tab ${tabId}; act selectTab {tabId: "${tabId}"} to use it.`,
          url: popup.url(),
        });
    });
  }

  /** The page operations act on. */
  get page(): Page {
    return this.pages.current.page;
  }

  /** The watched page operations act on: its CDP session, crash and per-page feature state. */
  get watched(): WatchedPage {
    return this.pages.current;
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

  /**
   * Runs `work` after every earlier operation on this session has finished; a crashed or hung page is replaced first,
   * and a page that held `work` past a timeout is freed before its error is answered.
   */
  runExclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      try {
        await this.pages.settleProbe();
        if (this.closedReason) throw new ServiceError('session_closed', this.closedReason);
        await this.pages.recoverFromCrash();
        this.lastUsedAt = new Date();
        return await work().catch(async (err: unknown) => {
          throw await this.pages.afterFailure(err);
        });
      } finally {
        this.lastUsedAt = new Date();
      }
    });
  }

  /** Before a main-frame navigation: replaces the page first if it does not answer a trivial script within `ms`. */
  replaceIfUnresponsive(ms: number): Promise<void> {
    return this.pages.replaceIfUnresponsive(ms);
  }

  /** After a navigation or a read timed out: replaces the page before the next operation if it no longer runs scripts. */
  checkResponsive(): void {
    this.pages.checkResponsive();
  }

  /** After a person's input was not taken: the page is replaced before the next operation if it does not answer. */
  replaceWhenUnresponsive(): void {
    this.pages.replaceWhenUnresponsive();
  }

  /** How long the session may stay idle: its own timeoutMs, else the server's. */
  idleTimeoutMs(serverIdleTimeoutMs: number): number {
    return this.startOptions.timeoutMs ?? serverIdleTimeoutMs;
  }

  info(serverIdleTimeoutMs: number): SessionInfo {
    const idleTimeoutMs = this.idleTimeoutMs(serverIdleTimeoutMs);
    // URLs a GET form made carry what it sent: the session's secrets are masked, as in its page text.
    const mask = (text: string) => this.recording.secrets.mask(text);
    return {
      id: this.id,
      mainFrameId: this.frameId(this.page.mainFrame()),
      url: mask(this.page.url()),
      frames: this.page.frames().map((frame) => {
        const parent = frame.parentFrame();
        return {
          frameId: this.frameId(frame),
          url: mask(frame.url()),
          name: mask(frame.name()),
          parentFrameId: parent ? this.frameId(parent) : null,
        };
      }),
      createdAt: this.createdAt.toISOString(),
      lastUsedAt: this.lastUsedAt.toISOString(),
      expiresAt: new Date(this.lastUsedAt.getTime() + idleTimeoutMs).toISOString(),
      recentEvents: this.log.all.slice(-10),
      host: this.pages.hostName,
      state: this.pages.hostLoss() ? 'lost' : 'open',
      tabs: this.pages.list().map((tab) => ({ ...tab, url: mask(tab.url) })),
      options: redactOptions(this.startOptions),
      ...(this.blocker ? { blockedRequests: this.blocker.total } : {}),
    };
  }

  /** Runs `hook` as the session ends, before its context closes (the recording saves its last chunk). */
  onClose(hook: () => Promise<void>): void {
    this.closeHooks.push(hook);
  }

  async close(reason: string): Promise<void> {
    if (this.closedReason) return;
    this.closedReason = reason;
    for (const hook of this.closeHooks)
      await withTimeout(hook(), CLOSE_TIMEOUT_MS, () => new Error('close hook timed out')).catch((err) =>
        this.logger.warn({ err, session: this.id }, 'a close hook failed'),
      );
    await withTimeout(this.context.close(), CLOSE_TIMEOUT_MS, () => new Error('context close timed out')).catch((err) =>
      this.logger.warn({ err, session: this.id }, 'closing the browser context failed'),
    );
  }
}
