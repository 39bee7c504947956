import { z } from 'zod';
import { isAbortError } from '../errors.js';
import { sleep } from '../time.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS } from '../page/cdp.js';
import type { Probe } from './page-script.js';
import { probePage } from './probe.js';
import { SETTLE, trackerOf } from './state.js';

/** Default longest wait for the page to finish reacting to an action (`settleMs`). */
export const DEFAULT_SETTLE_MS = 3_000;
export const MAX_SETTLE_MS = 30_000;
/** Once no work is pending, the DOM must have been still this long (work the tracker cannot see: message channels, sockets). */
export const STILL_AFTER_ACTION_MS = 40;
/** When the action changed nothing at all, one more look after this long catches a render queued by other means. */
const SECOND_LOOK_MS = 25;
const POLL_MS = 25;
/** A wait of at least this long is news for a client: the act text says what it waited for. */
export const LONG_SETTLE_MS = 1_000;

const SETTLE_REASONS = ['navigation', 'network', 'timers', 'animations', 'dom'] as const;
type SettleReason = (typeof SETTLE_REASONS)[number];

export const Settled = z
  .object({
    waitedMs: z.number().int().describe('From the end of the action until the page counted as settled, ms.'),
    waitedFor: z
      .enum(['nothing', ...SETTLE_REASONS, 'timeout'])
      .describe(
        'What held the answer longest: a navigation loading, requests the action started, short timers or animation frames, CSS transitions, the DOM still changing; timeout: settleMs passed with work pending (the page is read as it is).',
      ),
    busy: z.enum(SETTLE_REASONS).optional().describe('With timeout: what was still pending.'),
  })
  .describe('How long act waited for the page to finish reacting, and for what.');
export type Settled = z.infer<typeof Settled>;

/** Where an action started: the server's clock (for requests) and the page that was active. */
export interface ActionMark {
  at: number;
  doneAt?: number;
}

/**
 * Marks the start of an action in the page (the tracker counts work started after it) and in the network tracker.
 * Best effort: a page that does not answer is acted on all the same.
 */
export async function markAction(session: Session, callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS): Promise<ActionMark> {
  const watched = session.watched;
  const tracker = trackerOf(watched);
  const at = Date.now();
  tracker.markAt = at;
  // A page held by a script of its own (no earlier call timed out on it) is freed here, before the action waits on it.
  await probePage(watched, callTimeoutMs, 'mark').catch((err: unknown) => session.pages.recoverAfterTimeout(err));
  return { at };
}

/** The mark of the latest action on the active page, for a wait that is not an action of its own (`wait` with no arguments). */
export function latestMark(session: Session): ActionMark {
  return { at: trackerOf(session.watched).markAt };
}

/**
 * Waits until the page has finished reacting to the action marked by `mark`, at most `settleMs`: a navigation it
 * started has loaded, requests it started have finished, its short timers, animation frames and CSS transitions have
 * run, and then the DOM has been still for STILL_AFTER_ACTION_MS. Returns what it waited for; a page that does not settle is read
 * as it is.
 */
export async function settleAfterAction(
  session: Session,
  mark: ActionMark,
  options: { settleMs?: number; signal?: AbortSignal; callTimeoutMs?: number } = {},
): Promise<Settled> {
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const start = Date.now();
  const deadline = start + settleMs;
  const doneAt = mark.doneAt ?? start;
  const held = new Map<SettleReason, number>();
  let previous: { reason: SettleReason | undefined; at: number } = { reason: undefined, at: start };
  const account = (reason: SettleReason | undefined) => {
    const now = Date.now();
    if (previous.reason) held.set(previous.reason, (held.get(previous.reason) ?? 0) + now - previous.at);
    previous = { reason, at: now };
  };
  const result = (waitedFor: Settled['waitedFor'], busy?: SettleReason): Settled => ({
    waitedMs: Date.now() - start,
    waitedFor,
    ...(busy ? { busy } : {}),
  });
  if (settleMs <= 0) return result('nothing');
  while (true) {
    const remaining = deadline - Date.now();
    const watched = session.watched;
    const tracker = trackerOf(watched);
    let probe: Probe | null = null;
    if (remaining > 0) {
      try {
        probe = await probePage(watched, Math.min(remaining, options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS));
      } catch (err) {
        if (options.signal?.aborted || isAbortError(err)) throw err;
        // Mid-navigation the old document is gone and the new one not yet there: look again shortly.
        probe = null;
      }
    }
    const network = tracker.pendingSince(mark.at);
    const pending: SettleReason | undefined = !probe
      ? (network ?? 'navigation')
      : probe.loading
        ? 'navigation'
        : (network ?? (probe.timers || probe.frames ? 'timers' : probe.animations ? 'animations' : undefined));
    let delay = 0;
    if (pending) delay = POLL_MS;
    else if (probe) {
      // Activity since the mark: DOM changes and tracked work in the page, requests the action started.
      const last = Math.max(
        probe.lastChange > probe.mark ? probe.lastChange : 0,
        probe.lastWork > probe.mark ? probe.lastWork : 0,
        probe.fresh ? probe.now : 0,
      );
      const lastNetwork = tracker.lastMarkedActivity >= mark.at ? tracker.lastMarkedActivity : 0;
      if (last || lastNetwork)
        delay = Math.max(
          last ? last + STILL_AFTER_ACTION_MS - probe.now : 0,
          lastNetwork ? lastNetwork + STILL_AFTER_ACTION_MS - Date.now() : 0,
        );
      else delay = doneAt + SECOND_LOOK_MS - Date.now();
    }
    const waiting: SettleReason | undefined = pending ?? (delay > 0 ? 'dom' : undefined);
    account(waiting);
    if (!waiting) {
      if (probe) watched.state.get(SETTLE).lastSettled = { origin: probe.origin, count: probe.count, events: tracker.events };
      return result(longest(held));
    }
    if (Date.now() >= deadline) return result('timeout', waiting);
    // delay is POLL_MS while work is pending; a quiet window is slept out whole (the probe after it sees any change in it).
    await sleep(Math.max(1, Math.min(delay, deadline - Date.now())), options.signal);
  }
}

function longest(held: Map<SettleReason, number>): Settled['waitedFor'] {
  let best: SettleReason | undefined;
  for (const [reason, ms] of held) if (!best || ms > held.get(best)!) best = reason;
  return best ?? 'nothing';
}
