import type { Page } from 'playwright-core';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.js';
import { withTimeout } from '../time.js';
import type { Session } from '../sessions.js';
import { applyInput, type PageInput, type ViewportSize } from './input.js';

/** A person's hold on the page; `over` once it has ended, so input still queued under it is refused, not replayed. */
export interface Hold {
  over: boolean;
}

/** A viewer's input kept while the person waits for the running operation, with when it came. */
export interface BufferedInput<V> {
  viewer: V;
  input: PageInput;
  at: number;
}

/**
 * A viewer's input or copy the page has not taken within this is given up and the page is checked (a script that never
 * yields is replaced before the next operation); the input queued behind it is refused.
 */
export const LIVE_INPUT_TIMEOUT_MS = 5_000;
/** A hold that ended (Done, the takeover timeout, the agent's wait over) waits this long at most for input still queued. */
export const LIVE_DRAIN_TIMEOUT_MS = 30_000;
/** A click or wheel turn sent this long before the person got the page is not replayed: the page may have moved under it. */
export const STALE_POINTER_MS = 2_000;
/** Most inputs waiting for the page at once (a key press is two: down and up); more are refused. */
export const MAX_QUEUED_INPUT = 500;

/** Why input was not delivered, as the viewer shows it. */
export const REFUSALS = {
  stale:
    'You clicked or scrolled while an operation was acting on the page; the page may have moved since, so that click and the input after it were not replayed. Try again now.',
  full: 'Too much input is waiting for the page; it was not delivered. Wait for the page to catch up.',
  stuck: 'The page stopped taking input (a script that never yields); it is replaced before the next operation.',
  over: 'Control ended (Done, the takeover time limit, or the session ending) before the page took this input.',
  cancelled: 'You pressed Done before you had control; the input sent meanwhile was not delivered.',
  failed: 'The page did not take this input.',
  unreadable: 'The viewer sent a message the server does not take (a key name over 32 characters, a paste over 20,000 characters).',
} as const;
export type Refusal = keyof typeof REFUSALS;

/**
 * How many of a person's inputs an event is, as a refusal counts them: a key press, a text, a click, a wheel turn. The
 * other half of a press (key or button up) and pointer moves count nothing.
 */
export function inputsIn(input: PageInput): number {
  if (input.type === 'key' || input.type === 'mouse') return input.action === 'down' ? 1 : 0;
  return 1;
}

export interface InputQueueOptions<V> {
  session: Session;
  logger: Logger;
  /** The size the viewer's fractions are of: the screencast's frames, or the page's viewport. */
  frameSize(): ViewportSize | undefined;
  /** Tells a viewer that this many of its inputs were not delivered, and why. */
  refuse(viewer: V, inputs: number, why: Refusal): void;
}

type Button = 'left' | 'middle' | 'right';

/**
 * Viewers' input, run one at a time on the active page in the order it came, each given LIVE_INPUT_TIMEOUT_MS. Nothing
 * is dropped without the viewer being told: input that cannot be delivered is refused, and the viewer shows it.
 */
export class InputQueue<V> {
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Bumped when input times out: what was queued before is refused rather than sent to a page that does not answer. */
  private generation = 0;
  /** Keys and buttons a person's input pressed and has not released, on the page it pressed them on. */
  private pressed: { page: Page; keys: Set<string>; buttons: Set<Button> } | undefined;

  constructor(private readonly options: InputQueueOptions<V>) {}

  /** Runs `work` (a copy) in turn. */
  run(viewer: V, work: (page: Page) => Promise<void>, inputs = 1): void {
    if (this.queued >= MAX_QUEUED_INPUT) return this.options.refuse(viewer, inputs, 'full');
    this.queued++;
    const generation = this.generation;
    this.chain = this.chain.then(async () => {
      const { session, logger } = this.options;
      const page = session.page;
      try {
        if (generation !== this.generation) return this.options.refuse(viewer, inputs, 'stuck');
        const done = work(page);
        done.catch(() => undefined);
        await withTimeout(done, LIVE_INPUT_TIMEOUT_MS, () => new ServiceError('timeout', 'The page did not take the input.'));
      } catch (err) {
        logger.debug({ err, session: session.id }, 'live-view input failed');
        const timedOut = err instanceof ServiceError && err.code === 'timeout';
        this.options.refuse(viewer, inputs, timedOut ? 'stuck' : 'failed');
        if (timedOut && page === session.page) {
          this.generation++;
          session.replaceWhenUnresponsive();
        }
      } finally {
        this.queued--;
      }
    });
  }

  /** Replays a person's input in turn, unless their hold has ended by then: it is refused then. */
  apply(hold: Hold, viewer: V, input: PageInput): void {
    this.run(
      viewer,
      async (page) => {
        if (hold.over) return this.options.refuse(viewer, inputsIn(input), 'over');
        await applyInput(page, input, this.options.frameSize() ?? page.viewportSize() ?? { width: 1280, height: 800 });
        this.track(page, input);
      },
      inputsIn(input),
    );
  }

  /**
   * The input a person sent while waiting for the running operation, replayed in order when they get the page. Keys
   * and text are replayed however long they waited; a click or wheel turn older than STALE_POINTER_MS is not (the page
   * may have moved under it), nor anything after it, since what followed was meant for what it did: all are refused.
   */
  replay(hold: Hold, buffered: Array<BufferedInput<V>>, now = Date.now()): void {
    const stale = buffered.findIndex(
      ({ input, at }) => (input.type === 'wheel' || (input.type === 'mouse' && input.action === 'down')) && now - at > STALE_POINTER_MS,
    );
    for (const { viewer, input } of stale < 0 ? buffered : buffered.slice(0, stale)) this.apply(hold, viewer, input);
    if (stale >= 0) this.refuseAll(buffered.slice(stale), 'stale');
  }

  /** Refuses buffered input that will never be replayed (Done pressed before the person had the page). */
  refuseAll(buffered: Array<BufferedInput<V>>, why: Refusal): void {
    const counts = new Map<V, number>();
    for (const { viewer, input } of buffered) counts.set(viewer, (counts.get(viewer) ?? 0) + inputsIn(input));
    for (const [viewer, inputs] of counts) this.options.refuse(viewer, inputs, why);
  }

  /**
   * Waits for the input queued so far to run, LIVE_DRAIN_TIMEOUT_MS at most (what is left is refused once the hold is
   * marked over), then releases the keys and buttons the person left pressed, so the next operation types clean.
   */
  async drain(hold: Hold): Promise<void> {
    await withTimeout(this.chain, LIVE_DRAIN_TIMEOUT_MS, () => new Error('input still under way')).catch(() => undefined);
    hold.over = true;
    const pressed = this.pressed;
    this.pressed = undefined;
    if (!pressed || pressed.page.isClosed() || (!pressed.keys.size && !pressed.buttons.size)) return;
    const release = async () => {
      for (const key of pressed.keys) await pressed.page.keyboard.up(key).catch(() => undefined);
      for (const button of pressed.buttons) await pressed.page.mouse.up({ button }).catch(() => undefined);
    };
    await withTimeout(release(), LIVE_INPUT_TIMEOUT_MS, () => new Error('release timed out')).catch(() => undefined);
  }

  private track(page: Page, input: PageInput): void {
    if (input.type !== 'key' && input.type !== 'mouse') return;
    if (input.type === 'mouse' && input.action === 'move') return;
    if (this.pressed?.page !== page) this.pressed = { page, keys: new Set(), buttons: new Set() };
    const set: Set<string> = input.type === 'key' ? this.pressed.keys : this.pressed.buttons;
    const name = input.type === 'key' ? input.key : (input.button ?? 'left');
    if (input.action === 'down') set.add(name);
    else set.delete(name);
  }
}
