import { ServiceError, isAbortError } from '../errors.js';
import type { NavigatePolicy } from '../navigate.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead, type LastRead } from '../snapshot/last-read.js';
import { latestMark, markAction, settleAfterAction } from '../settle/index.js';
import { Variables } from '../variables.js';
import { DEFAULT_CHANGE_TOKENS, pageChange, type PageChange } from './page-change.js';
import { performAction } from './perform.js';
import type { Action, ActResult } from './schema.js';

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
}

/**
 * One action, the way act and the agent's browser tools both run it: mark where its work starts, perform it, wait for
 * the page to settle, and read what it changed (the diff, or the new page). Values of variables and every secret the
 * session has seen are masked in the result.
 */
export async function runAction(session: Session, action: Action, options: RunActionOptions = {}): Promise<ActResult> {
  const variables = options.variables ?? new Variables();
  const tabBefore = session.watched;
  const readBefore = lastRead(session);
  const urlBefore = session.page.url();
  // `wait` with no arguments waits for work already under way; every other action marks where its own work starts.
  const mark = isSettleWait(action) ? latestMark(session) : await markAction(session);
  const performed = await performAction(session, action, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    variables,
    policy: options.policy,
  });
  const settled = await settleAfterAction(session, mark, { settleMs: options.settleMs, signal: options.signal });
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
  return {
    success: true,
    message: redact(performed.message),
    action: {
      ...(action.ref ? { ref: action.ref } : {}),
      ...(action.selector ? { selector: action.selector } : {}),
      ...(action.x !== undefined && action.y !== undefined ? { x: action.x, y: action.y } : {}),
      method: action.method,
      arguments: action.arguments ?? {},
      description: redact(performed.description),
    },
    url,
    title: redact(title),
    ...change,
    settled,
    ...(session.pages.count > 1 ? { tabs: session.pages.list().map((tab) => ({ ...tab, url: redact(tab.url) })) } : {}),
  };
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
    const redacted = (read: LastRead) => ({ ...read, text: variables.redact(read.text) });
    const change = pageChange(before && redacted(before), redacted(after), urlBefore, maxTokens);
    return { change, title: snapshot.title };
  } catch (err) {
    if (signal?.aborted || isAbortError(err)) throw err;
    const reason = err instanceof ServiceError ? err.message : 'the page did not answer';
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
