import { ServiceError, isAbortError, throwIfAborted } from '../errors.js';
import { UsageTotal, type Usage } from '../usage.js';
import { createModelClient, type ModelDefaults } from '../llm/index.js';
import type { NavigatePolicy } from '../navigate.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead, type LastRead } from '../snapshot/last-read.js';
import { latestMark, markAction, settleAfterAction } from '../settle/index.js';
import { changedLocation, type PageLocation } from '../location.js';
import { Variables } from '../variables.js';
import { inferAction } from './infer.js';
import { DEFAULT_CHANGE_TOKENS, pageChange, type PageChange } from './page-change.js';
import { performAction } from './perform.js';
import type { Action, ActRequest, ActResult } from './schema.js';

/**
 * Performs one action, given as `{ref, method, arguments}` (an observe result as is) or chosen by a model from an
 * instruction, and answers what it changed on the page. `%name%` placeholders are filled from `variables` only for
 * the browser: the model, the result and the logs see the placeholder.
 */
export async function act(
  session: Session,
  req: ActRequest,
  defaults: ModelDefaults & NavigatePolicy,
  ctx: OperationContext = {},
): Promise<ActResult & { usage?: Usage; location?: PageLocation }> {
  if ((req.action === undefined) === (req.instruction === undefined))
    throw new ServiceError('invalid_argument', 'Give exactly one of action ({ref, method, arguments}) or instruction.');
  const variables = new Variables(req.variables);
  let action: Action;
  let usage: UsageTotal | undefined;
  if (req.instruction !== undefined) {
    const llm = createModelClient(req.modelName, req.modelClientOptions, { ...defaults, fallback: ctx.modelFallback });
    const snapshot = await takeSnapshot(session, { iframes: lastRead(session)?.iframes ?? true }, ctx);
    usage = new UsageTotal();
    action = await inferAction(llm, { instruction: req.instruction, snapshot, variables, signal: ctx.signal }, usage);
  } else {
    action = req.action!;
  }
  throwIfAborted(ctx.signal);
  const tabBefore = session.watched;
  const readBefore = lastRead(session);
  const urlBefore = session.page.url();
  ctx.progress?.({ message: `${action.method}${action.ref ? ` [${action.ref}]` : ''}`, data: { stage: 'action', method: action.method } });
  // `wait` with no arguments waits for work already under way; every other action marks where its own work starts.
  const mark = isSettleWait(action) ? latestMark(session) : await markAction(session);
  const performed = await performAction(session, action, { timeoutMs: req.timeoutMs, signal: ctx.signal, variables, policy: defaults });
  const settled = await settleAfterAction(session, mark, { settleMs: req.settleMs, signal: ctx.signal });
  // Another tab now (newTab, selectTab, closeTab): the result shows that tab's whole page text.
  const before = session.watched === tabBefore ? readBefore : undefined;
  const { change, title } = await readChange(session, before, urlBefore, req.maxTokens ?? DEFAULT_CHANGE_TOKENS, variables, ctx);
  // This call's variables, and every secret the session saw before (a password an earlier act filled).
  const redact = (text: string) => session.recording.secrets.mask(variables.redact(text));
  const url = redact(session.page.url());
  const location = changedLocation(session, { url, title: redact(title) });
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
    ...(location ? { location } : {}),
    ...change,
    settled,
    ...(session.pages.count > 1 ? { tabs: session.pages.list().map((tab) => ({ ...tab, url: redact(tab.url) })) } : {}),
    ...(usage ? { usage: usage.total } : {}),
  };
}

/** Reads the page after the action; when that fails the action still happened, and the result says the page was not read. */
async function readChange(
  session: Session,
  before: LastRead | undefined,
  urlBefore: string,
  maxTokens: number,
  variables: Variables,
  ctx: OperationContext,
): Promise<{ change: PageChange; title: string }> {
  try {
    const snapshot = await takeSnapshot(
      session,
      // Already settled by the action's own policy: read at once.
      { iframes: before?.iframes ?? false, domSettleTimeoutMs: 0 },
      { signal: ctx.signal },
    );
    const after = lastRead(session)!;
    const redacted = (read: LastRead) => ({ ...read, text: variables.redact(read.text) });
    const change = pageChange(before && redacted(before), redacted(after), urlBefore, maxTokens);
    return { change, title: snapshot.title };
  } catch (err) {
    if (ctx.signal?.aborted || isAbortError(err)) throw err;
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
