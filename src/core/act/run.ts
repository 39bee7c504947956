import { ServiceError, isAbortError, throwIfAborted } from '../errors.js';
import type { NavigatePolicy } from '../navigate.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead, type LastRead } from '../snapshot/last-read.js';
import { withoutFocus } from '../snapshot/render.js';
import { DEFAULT_SETTLE_MS, latestMark, markAction, settleAfterAction, type Settled } from '../settle/index.js';
import { Variables } from '../variables.js';
import { DEFAULT_CHANGE_TOKENS, pageChange, type PageChange } from './page-change.js';
import { checkAction, performAction, type Performed, type PerformOptions } from './perform.js';
import type { Action, ActResult } from './schema.js';
import { recordStep } from './record-step.js';

export interface RunActionOptions {
  /** Longest wait for the element to be actionable, ms. */
  timeoutMs?: number;
  /** Longest wait for the page to finish reacting before it is read, ms. */
  settleMs?: number;
  /** Budget for the page change in the result, o200k tokens (default DEFAULT_CHANGE_TOKENS). */
  maxTokens?: number;
  /** Fills %name% placeholders for the browser only; results show the placeholder. */
  variables?: Variables;
  /** Which URLs newTab may open. */
  policy?: NavigatePolicy;
  signal?: AbortSignal;
  /** The instruction a model chose these actions for: kept with each step of the session's run (healing reads it). */
  instruction?: string;
}

/** Longest settle between two actions of one call: the last one waits its whole settleMs before the page is read. */
const BETWEEN_ACTIONS_SETTLE_MS = 1_000;

/**
 * One action, the way act and the agent's browser tools both run it: mark where its work starts, perform it, wait for
 * the page to settle, and read what it changed (the diff, or the new page). Values of variables and every secret the
 * session has seen are masked in the result.
 */
export async function runAction(session: Session, action: Action, options: RunActionOptions = {}): Promise<ActResult> {
  return runActions(session, [action], options);
}

/**
 * Several actions in order, as a person does them one after another: each performed and settled (at most
 * BETWEEN_ACTIONS_SETTLE_MS before the next), then one read of the page from before the first to after the last. Every
 * action is checked before the first runs; the run stops at the first that fails, and the result says which (`failed`)
 * and what the ones before it changed. One action alone answers as it always did, and its failure is an error.
 */
export async function runActions(session: Session, actions: Action[], options: RunActionOptions = {}): Promise<ActResult> {
  const batch = actions.length > 1;
  actions.forEach((action, i) => (batch ? forAction(i, () => checkAction(action)) : checkAction(action)));
  const variables = options.variables ?? new Variables();
  const tabBefore = session.watched;
  const readBefore = lastRead(session);
  const urlBefore = session.page.url();
  const steps: Array<{ action: Action; performed: Performed }> = [];
  let failed: ActResult['failed'];
  let settled: Settled | undefined;
  for (const [i, action] of actions.entries()) {
    throwIfAborted(options.signal);
    const last = i === actions.length - 1;
    const settleMs = last ? options.settleMs : Math.min(options.settleMs ?? DEFAULT_SETTLE_MS, BETWEEN_ACTIONS_SETTLE_MS);
    try {
      const done = await performAndSettle(session, action, { ...options, variables, settleMs });
      steps.push({ action, performed: done.performed });
      settled = done.settled;
    } catch (err) {
      if (!batch || options.signal?.aborted || isAbortError(err)) throw err;
      const error = err instanceof ServiceError ? err : new ServiceError('internal', 'The action failed.', { cause: err });
      failed = { step: i + 1, code: error.code, message: error.message };
      break;
    }
  }
  // Another tab now (newTab, selectTab, closeTab): the result shows that tab's whole page text.
  const before = session.watched === tabBefore ? readBefore : undefined;
  const { change, title } = await readChange(session, {
    before,
    urlBefore,
    maxTokens: options.maxTokens ?? DEFAULT_CHANGE_TOKENS,
    variables,
    signal: options.signal,
  });
  // This call's variables, and every secret the session saw before (a password an earlier act filled).
  const redact = (text: string) => session.recording.secrets.mask(variables.redact(text));
  const url = redact(session.page.url());
  const lastAction = failed ? actions[failed.step - 1]! : steps.at(-1)!.action;
  const message = !batch
    ? steps[0]!.performed.message
    : failed
      ? `Did ${steps.length} of ${actions.length} actions: action ${failed.step} failed.`
      : `Did ${actions.length} actions.`;
  return {
    success: !failed,
    message: redact(message),
    action: {
      ...(lastAction.ref ? { ref: lastAction.ref } : {}),
      ...(lastAction.selector ? { selector: lastAction.selector } : {}),
      ...(lastAction.x !== undefined && lastAction.y !== undefined ? { x: lastAction.x, y: lastAction.y } : {}),
      method: lastAction.method,
      arguments: lastAction.arguments ?? {},
      description: redact(failed ? '' : steps.at(-1)!.performed.description),
    },
    url,
    title: redact(title),
    ...change,
    ...(settled ? { settled } : {}),
    ...(batch ? { steps: steps.map(({ action, performed }) => ({ method: action.method, message: redact(performed.message) })) } : {}),
    ...(failed ? { failed: { ...failed, message: redact(failed.message) } } : {}),
    ...(session.pages.count > 1 ? { tabs: session.pages.list().map((tab) => ({ ...tab, url: redact(tab.url) })) } : {}),
  };
}

/**
 * One action performed and settled, and kept in the session's run (docs/replay.md), without reading the page after it:
 * what act does for each of its actions, and all that replay does for a step.
 */
export async function performAndSettle(
  session: Session,
  action: Action,
  options: RunActionOptions & { variables: Variables; target?: PerformOptions['target'] },
): Promise<{ performed: Performed; settled: Settled }> {
  // `wait` with no arguments waits for work already under way; every other action marks where its own work starts.
  const marking = isSettleWait(action) ? Promise.resolve(latestMark(session)) : markAction(session);
  // Awaited below; a refused action throws before it, and the mark's own failure is then nobody's to report.
  marking.catch(() => undefined);
  const urlBefore = session.page.url();
  const performed = await performAction(session, action, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    variables: options.variables,
    policy: options.policy,
    target: options.target,
    // Marked while the target is described: both read the page, neither changes it, and the action waits for both.
    ready: marking,
  });
  const mark = await marking;
  const settled = await settleAfterAction(session, mark, { settleMs: options.settleMs, signal: options.signal });
  const navigated = session.page.url() !== urlBefore;
  recordStep(session, { action, performed, settled, navigated, variables: options.variables, instruction: options.instruction });
  return { performed, settled };
}

/** Runs `make` for the action at `index` of several: its ServiceError says which one (`actions.3: ...`). */
export function forAction<T>(index: number, make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    throw new ServiceError(err.code, `actions.${index}: ${err.message}`, { details: err.details, cause: err });
  }
}

interface ChangeRead {
  before: LastRead | undefined;
  urlBefore: string;
  maxTokens: number;
  variables: Variables;
  signal?: AbortSignal;
}

/** Reads the page after the action; when that fails the action still happened, and the result says the page was not read. */
async function readChange(
  session: Session,
  { before, urlBefore, maxTokens, variables, signal }: ChangeRead,
): Promise<{ change: PageChange; title: string }> {
  try {
    const snapshot = await takeSnapshot(
      session,
      // Already settled by the action's own policy: read at once.
      { iframes: before?.iframes ?? false, domSettleTimeoutMs: 0 },
      { signal },
    );
    const after = lastRead(session)!;
    // Counting the change is work on the server's thread: a call cancelled meanwhile skips it.
    throwIfAborted(signal);
    // Where the focus went is no change to show: a field left for a button would be two lines of every diff.
    const redacted = (read: LastRead) => ({ ...read, text: withoutFocus(variables.redact(read.text)) });
    const change = pageChange(before && redacted(before), redacted(after), urlBefore, maxTokens);
    return { change, title: snapshot.title };
  } catch (err) {
    if (signal?.aborted || isAbortError(err)) throw err;
    // A read that timed out on a page held by a script has the script stopped now: the next call finds it answering.
    const told = await session.pages.recoverAfterTimeout(err);
    const reason = told instanceof ServiceError ? told.message : 'the page did not answer';
    const url = session.page.url();
    return {
      change: {
        pageChanged: url !== urlBefore,
        navigated: url !== urlBefore,
        truncated: `The page could not be read after the action: ${reason}`,
      },
      title: '',
    };
  }
}

/** `wait` with none of text, textGone and ms: a wait for the page to settle. */
export function isSettleWait(action: Action): boolean {
  const args = action.arguments ?? {};
  return action.method === 'wait' && args.text === undefined && args.textGone === undefined && args.ms === undefined;
}
