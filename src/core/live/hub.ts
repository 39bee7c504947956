import type { Page } from 'playwright-core';
import type { Logger } from 'pino';
import { cancelledError, ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import type { TabInfo } from '../session/pages.js';
import { applyInput, selectedText, type LiveInput, type PageInput, type ViewportSize } from './input.js';

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
  /** Why the agent asked for a person, while it waits. */
  reason: string | null;
}

export type LiveMessage = LiveStatus | { type: 'copied'; text: string } | { type: 'closed'; reason: LiveCloseReason; message: string };
export type LiveCloseReason = 'ended' | 'expired' | 'shutdown';

/** One connected viewer, as the door that serves it implements it. */
export interface LiveViewer {
  readonly interactive: boolean;
  /** When the viewer's token expires: it is closed then. */
  readonly expiresAt: number;
  /** Writes one JPEG frame; `sent` is called once it has left (or failed), so the next one may go. */
  sendFrame(jpeg: Buffer, sent: () => void): void;
  send(message: LiveMessage): void;
  close(reason: LiveCloseReason, message: string): void;
}

interface ViewerSlot {
  viewer: LiveViewer;
  /** A frame is being written to this viewer. */
  writing: boolean;
  /** The newest frame that arrived meanwhile: older ones are dropped, never queued. */
  pending?: Buffer;
}

type Control =
  | { state: 'none' }
  | { state: 'waiting'; since: number; buffered: PageInput[] }
  | { state: 'person'; kind: 'takeover' | 'ask'; reason: string | null; release: () => void; fail?: (err: Error) => void };

const TICK_MS = 250;
/** Input sent while a takeover waits for the running operation is kept this long, then dropped (stale positions). */
const BUFFER_WAIT_MS = 2_000;
const MAX_BUFFERED = 200;
const SCREENCAST_QUALITY = 70;

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
  private inputChain: Promise<void> = Promise.resolve();
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
  ) {}

  get viewerCount(): number {
    return this.slots.size;
  }

  get idle(): boolean {
    return this.slots.size === 0 && this.control.state === 'none';
  }

  /** Adds a viewer; the first one starts the screencast. Returns the function that removes it. */
  attach(viewer: LiveViewer): () => void {
    const slot: ViewerSlot = { viewer, writing: false };
    this.slots.add(slot);
    if (this.slots.size === 1) {
      this.tick = setInterval(() => this.onTick(), TICK_MS);
      this.tick.unref();
    }
    this.syncCast();
    viewer.send(this.status());
    if (this.lastFrame) this.write(slot, this.lastFrame);
    return () => this.detach(slot);
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

  /** One message from a viewer; read-only viewers' messages other than copy are ignored. */
  receive(viewer: LiveViewer, input: LiveInput): void {
    if (input.type === 'copy') {
      this.queueInput(async () => viewer.send({ type: 'copied', text: await selectedText(this.session.page) }));
      return;
    }
    if (!viewer.interactive) return;
    if (input.type === 'done') return this.handBack();
    if (input.type === 'takeover') return this.takeover();
    const control = this.control;
    if (control.state === 'person') return this.queueInput(() => this.apply(input));
    if (control.state === 'none') this.takeover();
    const waiting = this.control;
    if (waiting.state === 'waiting' && Date.now() - waiting.since < BUFFER_WAIT_MS && waiting.buffered.length < MAX_BUFFERED)
      waiting.buffered.push(input);
  }

  /**
   * A person takes the page: a hold joins the session's queue, so it starts once the running operation has finished,
   * and operations called meanwhile wait behind it until Done, the last viewer leaving, or the takeover timeout.
   */
  takeover(): void {
    if (this.control.state !== 'none') return;
    const waiting: Control = { state: 'waiting', since: Date.now(), buffered: [] };
    this.control = waiting;
    this.pushStatus();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held: Control | undefined;
    void this.session
      .runExclusive(async () => {
        // Superseded (the agent asked meanwhile) or abandoned (everyone left) before the queue reached it.
        if (this.control !== waiting) return;
        held = { state: 'person', kind: 'takeover', reason: null, release };
        this.control = held;
        const timer = setTimeout(release, this.options.takeoverTimeoutMs);
        timer.unref();
        // The last viewer leaving hands the page back (detach); this covers the link nobody opened.
        const unopened = setTimeout(() => this.slots.size === 0 && release(), this.options.takeoverFirstViewerMs);
        unopened.unref();
        for (const input of waiting.buffered) this.queueInput(() => this.apply(input));
        this.pushStatus();
        await released;
        clearTimeout(timer);
        clearTimeout(unopened);
        await this.inputChain;
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
      const held: Control = { state: 'person', kind: 'ask', reason, release: () => finish(), fail: (err) => finish(err) };
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.control === held) this.control = { state: 'none' };
        this.pushStatus();
        void this.inputChain.then(() => (err ? reject(err) : resolve()));
        if (this.idle) this.options.onIdle();
      };
      const onAbort = () => finish(cancelledError());
      const timer = setTimeout(
        () => finish(new ServiceError('timeout', `Nobody pressed Done in the live view within ${Math.round(timeoutMs / 1000)} s.`)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.control = held;
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
      this.control = { state: 'none' };
      this.pushStatus();
    }
  }

  private queueInput(work: () => Promise<void>): void {
    this.inputChain = this.inputChain
      .then(work)
      .catch((err: unknown) => this.options.logger.debug({ err, session: this.session.id }, 'live-view input failed'));
  }

  private apply(input: PageInput): Promise<void> {
    const page = this.session.page;
    return applyInput(page, input, this.frameSize ?? page.viewportSize() ?? { width: 1280, height: 800 });
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
    for (const slot of this.slots) this.write(slot, frame.data);
  }

  private write(slot: ViewerSlot, jpeg: Buffer): void {
    if (slot.writing) {
      slot.pending = jpeg;
      return;
    }
    slot.writing = true;
    slot.viewer.sendFrame(jpeg, () => {
      slot.writing = false;
      const next = slot.pending;
      slot.pending = undefined;
      if (next && this.slots.has(slot)) this.write(slot, next);
    });
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
    for (const slot of this.slots) slot.viewer.send(status);
  }

  private status(): LiveStatus {
    const page = this.session.page;
    const size = this.frameSize ?? page.viewportSize() ?? { width: 1280, height: 800 };
    return {
      type: 'status',
      url: page.url(),
      tabs: this.session.pages.list(),
      width: size.width,
      height: size.height,
      acting: this.session.isBusy && this.control.state !== 'person',
      control: this.control.state,
      reason: this.control.state === 'person' ? this.control.reason : null,
    };
  }
}
