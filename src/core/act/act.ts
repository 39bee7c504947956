import { ServiceError, throwIfAborted } from '../errors.js';
import { UsageTotal, type Usage } from '../usage.js';
import { createModelClient, type ModelDefaults } from '../llm/index.js';
import { changedLocation, type PageLocation } from '../location.js';
import type { NavigatePolicy } from '../navigate.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead } from '../snapshot/last-read.js';
import { Variables } from '../variables.js';
import { inferAction } from './infer.js';
import { runAction } from './run.js';
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
  ctx.progress?.({ message: `${action.method}${action.ref ? ` [${action.ref}]` : ''}`, data: { stage: 'action', method: action.method } });
  const result = await runAction(session, action, {
    timeoutMs: req.timeoutMs,
    settleMs: req.settleMs,
    maxTokens: req.maxTokens,
    variables,
    policy: defaults,
    signal: ctx.signal,
  });
  // What the client's answers last showed; the agent's own actions leave it alone (its caller sees no URL).
  const location = changedLocation(session, { url: result.url, title: result.title });
  return { ...result, ...(location ? { location } : {}), ...(usage ? { usage: usage.total } : {}) };
}
