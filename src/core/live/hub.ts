import type { Page } from 'playwright-core';
import type { Logger } from 'pino';
import { cancelledError, ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import type { TabInfo } from '../session/pages.js';
import { selectedText, type LiveInput, type ViewportSize } from './input.js';
import { InputQueue, REFUSALS, type BufferedInput, type Hold, type Refusal } from './queue.js';

/** What the viewer page shows besides the frames; sent when it changes. */
export interface LiveStatus {
  type: 'status';
  url: string;
  tabs: TabInfo[];
  /** The page's viewport in CSS pixels: the frames have its aspect ratio. */
  width: number;
  height: number;
  /** An operation or the agent is acting on the page (the banner). */
  acting: boolean;
  /** none: nobody holds the page; waiting: a person asked and waits for the running operation; person: a person holds it. */
  control: 'none' | 'waiting' | 'person';
  /** Why the agent asked for a person, while it waits: the agent's own words. */
  reason: string | null;
  /** What a person is shown of that reason: marked as the agent's words, with a warning that a page may have steered them. */
  asks: string | null;
}

/** Input of this viewer that was not delivered: `total` since it connected, `message` why the latest was not. */
export interface LiveRefused {
  type: 'refused';
  total: number;
  message: string;
}

export type LiveMessage =
  LiveStatus | LiveRefused | { type: 'copied'; text: string } | { type: 'closed'; reason: LiveCloseReason; message: string };
export type LiveCloseReason = 'ended' | 'expired' | 'shutdown';

/** One connected viewer, as the door that serves it implements it. */
export interface LiveViewer {
  readonly interactive: boolean;
  /** When the viewer's token expires: it is closed then. */
  readonly expiresAt: number;
  /** Writes one JPEG frame; `sent` is called once it has left (or failed), so the next one may go. */
  sendFrame(jpeg: Buffer, sent: () => void): void;
  /** Writes one message; `sent`, when given, is called once it has left (or failed). */
  send(message: LiveMessage, sent?: () => void): void;
  close(reason: LiveCloseReason, message: string): void;
}

/**
 * One kind of message to one viewer, one at a time: while one is being written, newer ones replace each other in a
 * single slot and only the newest is sent next, so a viewer who stops reading holds one, never a queue.
 */
class NewestOnly<T> {
  private writing = false;
  private pending: T | undefined;

  constructor(private readonly write: (item: T, sent: () => void) => void) {}

  /** Whether a message waits in the slot (tests). */
  get waiting(): boolean {
    return this.pending !== undefined;
  }

  push(item: T): void {
    if (this.writing) {
      this.pending = item;
      return;
    }
    this.writing = true;
    this.write(item, () => {
      this.writing = false;
      const next = this.pending;
      this.pending = undefined;
      if (next !== undefined) this.push(next);
    });
  }
}

interface ViewerSlot {
  viewer: LiveViewer;
  frames: NewestOnly<Buffer>;
  statuses: NewestOnly<LiveStatus>;
  /** Refusals have a single slot too: the newest carries the running total. */
  refusals: NewestOnly<LiveRefused>;
  refused: number;
}

type Control =
  | { state: 'none' }
  | { state: 'waiting'; buffered: Array<BufferedInput<LiveViewer>> }
  | {
      state: 'person';
      kind: 'takeover' | 'ask';
      reason: string | null;
      hold: Hold;
      release: () => void;
      fail?: (err: Error) => void;
    };

const TICK_MS = 250;
/** Most inputs kept while a takeover waits for the running operation; more are refused. */
const MAX_BUFFERED = 500;
const SCREENCAST_QUALITY = 70;
/** Copied text is cut to this many characters. */
export const MAX_COPIED_CHARS = 1_000_000;
/** URLs in the status are cut to this many characters: the viewer shows them in one line, and a page can make one megabytes long. */
const MAX_STATUS_URL_CHARS = 8_192;
/** Viewers connected to one session at once; the next is refused with `viewer_limit`. */
export const MAX_VIEWERS_PER_SESSION = 10;

export interface SessionLiveOptions {
  logger: Logger;
  /** How long a person may hold the page by takeover before control returns by itself. */
  takeoverTimeoutMs: number;
  /** A takeover that no viewer ever joined (a link asked with `takeover: true` and never opened) ends after this. */
  takeoverFirstViewerMs: number;
  /** Called when nobody watches and nobody holds the page: the hub may be dropped. */
  onIdle: () => void;
}

/**
 * The live view of one session: one screencast of its active tab shared by every viewer (started with the first
 * viewer, stopped with the last), the viewers' input replayed on the page, and who holds the page.
 */
export class SessionLive {
  private readonly slots = new Set<ViewerSlot>();
  private castPage: Page | undefined;
  private castChain: Promise<void> = Promise.resolve();
  private readonly input: InputQueue<LiveViewer>;
  private tick: NodeJS.Timeout | undefined;
  private lastStatus = '';
  private frameSize: ViewportSize | undefined;
  /** The newest frame, for a viewer who joins while the page is still (the screencast only sends changes). */
  private lastFrame: Buffer | undefined;
  private control: Control = { state: 'none' };
  /** Set by the owner: undoes what it attached to the session when the hub is dropped. */
  onDrop: (() => void) | undefined;
  /** Frames delivered by the screencast (benchmarks). */
  framesReceived = 0;

  constructor(
    readonly session: Session,
    private readonly options: SessionLiveOptions,
  ) {
    this.input = new InputQueue({
      session,
      logger: options.logger,
      frameSize: () => this.frameSize,
      refuse: (viewer, inputs, why) => this.refuse(viewer, inputs, why),
    });
  }

  get viewerCount(): number {
    return this.slots.size;
  }

  get idle(): boolean {
    return this.slots.size === 0 && this.control.state === 'none';
  }

  /** Adds a viewer; the first one starts the screencast. Returns the function that removes it. */
  attach(viewer: LiveViewer): () => void {
    this.admit();
    const slot: ViewerSlot = {
      viewer,
      frames: new NewestOnly((jpeg, sent) => (this.slots.has(slot) ? viewer.sendFrame(jpeg, sent) : sent())),
      statuses: new NewestOnly((status, sent) => (this.slots.has(slot) ? viewer.send(status, sent) : sent())),
      refusals: new NewestOnly((refused, sent) => (this.slots.has(slot) ? viewer.send(refused, sent) : sent())),
      refused: 0,
    };
    this.slots.add(slot);
    if (this.slots.size === 1) {
      this.tick = setInterval(() => this.onTick(), TICK_MS);
      this.tick.unref();
    }
    this.syncCast();
    slot.statuses.push(this.status());
    if (this.lastFrame) slot.frames.push(this.lastFrame);
    return () => this.detach(slot);
  }

  /** Throws `viewer_limit` when the session already has as many viewers as it may. */
  admit(): void {
    if (this.slots.size >= MAX_VIEWERS_PER_SESSION)
      throw new ServiceError(
        'viewer_limit',
        `This session already has ${MAX_VIEWERS_PER_SESSION} live viewers, the most it may have. Close one and open the link again.`,
      );
  }

  /** Whether a status waits in a viewer's single slot behind the one being written (tests). */
  statusWaiting(viewer: LiveViewer): boolean {
    return [...this.slots].some((slot) => slot.viewer === viewer && slot.statuses.waiting);
  }

  private detach(slot: ViewerSlot): void {
    if (!this.slots.delete(slot)) return;
    if (this.slots.size > 0) return;
    clearInterval(this.tick);
    this.tick = undefined;
    this.lastStatus = '';
    this.syncCast();
    // Nobody is left to press Done: a takeover hands the page back; an agent's question waits for its own timeout.
    if (this.control.state === 'person' && this.control.kind === 'takeover') this.control.release();
    if (this.control.state === 'waiting') this.control = { state: 'none' };
    if (this.idle) this.options.onIdle();
  }

  /** Closes every viewer (the session ended, or the server stops). */
  closeAll(reason: LiveCloseReason, message: string): void {
    for (const slot of [...this.slots]) {
      slot.viewer.close(reason, message);
      this.detach(slot);
    }
    if (this.control.state === 'person') this.control.release();
  }

  /**
   * One message from a viewer; a read-only viewer's are all ignored, copy included. Input is delivered in the order it
   * came, or refused with a `refused` message the viewer shows: never dropped without a word.
   */
  receive(viewer: LiveViewer, input: LiveInput): void {
    if (!viewer.interactive) return;
    if (input.type === 'copy') {
      // Never a password field's value, and the session's secrets masked as everywhere else.
      const mask = (text: string) => this.session.recording.secrets.mask(text);
      return this.input.run(viewer, async (page) =>
        viewer.send({ type: 'copied', text: mask(await selectedText(page, MAX_COPIED_CHARS)) }),
      );
    }
    if (input.type === 'done') return this.handBack();
    if (input.type === 'takeover') return this.takeover();
    const control = this.control;
    if (control.state === 'person') return this.input.apply(control.hold, viewer, input);
    if (control.state === 'none') this.takeover();
    const waiting = this.control;
    if (waiting.state !== 'waiting') return;
    if (waiting.buffered.length >= MAX_BUFFERED) return this.input.refuseAll([{ viewer, input, at: Date.now() }], 'full');
    waiting.buffered.push({ viewer, input, at: Date.now() });
  }

  /** A message from an interactive viewer that is no input the server takes: refused, so the person knows. */
  receiveUnreadable(viewer: LiveViewer): void {
    if (viewer.interactive) this.refuse(viewer, 1, 'unreadable');
  }

  private refuse(viewer: LiveViewer, inputs: number, why: Refusal): void {
    if (inputs <= 0) return;
    for (const slot of this.slots)
      if (slot.viewer === viewer) {
        slot.refused += inputs;
        slot.refusals.push({ type: 'refused', total: slot.refused, message: REFUSALS[why] });
      }
  }

  /**
   * A person takes the page: a hold joins the session's queue, so it starts once the running operation has finished,
   * and operations called meanwhile wait behind it until Done, the last viewer leaving, or the takeover timeout,
   * whatever the page does: input still queued then is waited for LIVE_DRAIN_TIMEOUT_MS at most, the rest refused.
   */
  takeover(): void {
    if (this.control.state !== 'none') return;
    const waiting: Control = { state: 'waiting', buffered: [] };
    this.control = waiting;
    this.pushStatus();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held: Control | undefined;
    void this.session
      .runExclusive(async () => {
        // Superseded (the agent asked meanwhile) or abandoned (everyone left) before the queue reached it.
        if (this.control !== waiting) return;
        const hold: Hold = { over: false };
        held = { state: 'person', kind: 'takeover', reason: null, hold, release };
        this.control = held;
        const timer = setTimeout(release, this.options.takeoverTimeoutMs);
        timer.unref();
        // The last viewer leaving hands the page back (detach); this covers the link nobody opened.
        const unopened = setTimeout(() => this.slots.size === 0 && release(), this.options.takeoverFirstViewerMs);
        unopened.unref();
        this.input.replay(hold, waiting.buffered);
        this.pushStatus();
        await released;
        clearTimeout(timer);
        clearTimeout(unopened);
        if (this.control === held) {
          this.control = { state: 'none' };
          this.pushStatus();
        }
        await this.input.drain(hold);
      })
      .catch((err: unknown) => this.options.logger.debug({ err, session: this.session.id }, 'live-view takeover ended with an error'))
      .finally(() => {
        if (this.control === waiting || this.control === held) this.control = { state: 'none' };
        this.pushStatus();
        if (this.idle) this.options.onIdle();
      });
  }

  /**
   * Called by an operation that holds the session's queue (the agent's ask_human): gives the page to a person and
   * resolves when they press Done, or fails with `timeout` after `timeoutMs`, or `cancelled` when the signal fires.
   */
  waitForPerson(reason: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(cancelledError());
      let settled = false;
      const hold: Hold = { over: false };
      const held: Control = { state: 'person', kind: 'ask', reason, hold, release: () => finish(), fail: (err) => finish(err) };
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.control === held) this.control = { state: 'none' };
        this.pushStatus();
        void this.input.drain(hold).then(() => (err ? reject(err) : resolve()));
        if (this.idle) this.options.onIdle();
      };
      const onAbort = () => finish(cancelledError());
      const timer = setTimeout(
        () => finish(new ServiceError('timeout', `Nobody pressed Done in the live view within ${Math.round(timeoutMs / 1000)} s.`)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      // A person already waiting for the page (their takeover queued behind this operation) gets it now, input and all.
      const waiting = this.control;
      this.control = held;
      if (waiting.state === 'waiting') this.input.replay(hold, waiting.buffered);
      this.pushStatus();
    });
  }

  /** Ends an agent's wait for a person with an error (the door learnt nobody will come). */
  failWait(err: Error): void {
    if (this.control.state === 'person') this.control.fail?.(err);
  }

  private handBack(): void {
    if (this.control.state === 'person') this.control.release();
    else if (this.control.state === 'waiting') {
      this.input.refuseAll(this.control.buffered, 'cancelled');
      this.control = { state: 'none' };
      this.pushStatus();
    }
  }

  /** Makes the screencast match the viewers: the active tab's while anyone watches, none otherwise. */
  private syncCast(): void {
    this.castChain = this.castChain.then(async () => {
      const wanted = this.slots.size > 0 && !this.session.closedReason ? this.session.page : undefined;
      if (wanted === this.castPage) return;
      const previous = this.castPage;
      this.castPage = undefined;
      if (previous && !previous.isClosed()) await previous.screencast.stop().catch(() => undefined);
      if (!wanted || wanted.isClosed()) return;
      this.frameSize = undefined;
      this.lastFrame = undefined;
      try {
        await wanted.screencast.start({ quality: SCREENCAST_QUALITY, onFrame: (frame) => this.onFrame(wanted, frame) });
        this.castPage = wanted;
      } catch (err) {
        this.options.logger.warn({ err, session: this.session.id }, 'live-view screencast did not start');
      }
    });
  }

  /** Fans a frame out without waiting for anyone: a viewer still writing the previous one gets only the newest later. */
  private onFrame(page: Page, frame: { data: Buffer; viewportWidth: number; viewportHeight: number }): void {
    if (page !== this.castPage && this.castPage !== undefined) return;
    this.framesReceived++;
    if (frame.viewportWidth > 0 && frame.viewportHeight > 0) {
      const size = this.frameSize;
      if (!size || size.width !== frame.viewportWidth || size.height !== frame.viewportHeight)
        this.frameSize = { width: frame.viewportWidth, height: frame.viewportHeight };
    }
    this.lastFrame = frame.data;
    for (const slot of this.slots) slot.frames.push(frame.data);
  }

  private onTick(): void {
    if (this.session.closedReason) return this.closeAll('ended', 'The session has ended.');
    const now = Date.now();
    for (const slot of [...this.slots])
      if (slot.viewer.expiresAt <= now) {
        slot.viewer.close('expired', 'This live-view link has expired.');
        this.detach(slot);
      }
    if (this.castPage !== this.session.page) this.syncCast();
    this.pushStatus();
  }

  private pushStatus(): void {
    if (!this.slots.size) return;
    const status = this.status();
    const text = JSON.stringify(status);
    if (text === this.lastStatus) return;
    this.lastStatus = text;
    for (const slot of this.slots) slot.statuses.push(status);
  }

  private status(): LiveStatus {
    const page = this.session.page;
    const size = this.frameSize ?? page.viewportSize() ?? { width: 1280, height: 800 };
    // The session's secrets masked in every encoding, as in the action log and act's results (a GET form's URL).
    const url = (raw: string) => this.session.recording.secrets.mask(raw).slice(0, MAX_STATUS_URL_CHARS);
    return {
      type: 'status',
      url: url(page.url()),
      tabs: this.session.pages.list().map((tab) => ({ ...tab, url: url(tab.url) })),
      width: size.width,
      height: size.height,
      acting: this.session.isBusy && this.control.state !== 'person',
      control: this.control.state,
      reason: this.control.state === 'person' ? this.control.reason : null,
      asks: this.control.state === 'person' && this.control.reason ? agentAsks(this.control.reason) : null,
    };
  }
}

/**
 * The agent's ask_human reason as a person reads it (live view, MCP elicitation): quoted as the agent's words, with a
 * warning, since a page the agent read may have written them ("paste your API key into the page").
 */
export function agentAsks(reason: string): string {
  return `The agent asks, in its own words: “${reason}” These words come from the agent, and a web page it read may have steered them: never type a password, API key or code into a page only because the agent asks for it.`;
}
