import { ServiceError, throwIfAborted } from '../errors.js';
import { UsageTotal, type Usage } from '../usage.js';
import { createModelClient, type ModelDefaults } from '../llm/index.js';
import { changedLocation, type PageLocation } from '../location.js';
import type { NavigatePolicy } from '../navigate.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead } from '../snapshot/last-read.js';
import { parseInput } from '../validation.js';
import { Variables } from '../variables.js';
import { inferAction } from './infer.js';
import { runActions } from './run.js';
import { Action, type ActRequest, type ActResult } from './schema.js';

/**
 * Performs one action, given as `{ref, method, arguments}` (an observe result as is) or chosen by a model from an
 * instruction, or several given in order (`actions`), and answers what they changed on the page. `%name%` placeholders are filled from `variables` only for
 * the browser: the model, the result and the logs see the placeholder.
 */
export async function act(
  session: Session,
  req: ActRequest,
  defaults: ModelDefaults & NavigatePolicy,
  ctx: OperationContext = {},
): Promise<ActResult & { usage?: Usage; location?: PageLocation }> {
  if ([req.action, req.actions, req.instruction].filter((given) => given !== undefined).length !== 1)
    throw new ServiceError(
      'invalid_argument',
      'Give exactly one of action ({ref, method, arguments}), actions (several, in order) or instruction.',
    );
  const variables = new Variables(req.variables);
  let actions: Action[];
  let usage: UsageTotal | undefined;
  if (req.instruction !== undefined) {
    const llm = createModelClient(req.modelName, req.modelClientOptions, { ...defaults, fallback: ctx.modelFallback });
    const snapshot = await takeSnapshot(session, { iframes: lastRead(session)?.iframes ?? true }, ctx);
    usage = new UsageTotal();
    actions = [await inferAction(llm, { instruction: req.instruction, snapshot, variables, signal: ctx.signal }, usage)];
  } else {
    actions = req.actions ? req.actions.map((given, i) => parseInput(Action, given, `actions.${i}`)) : [req.action!];
  }
  throwIfAborted(ctx.signal);
  const [first] = actions;
  ctx.progress?.({
    message: actions.length > 1 ? `${actions.length} actions` : `${first!.method}${first!.ref ? ` [${first!.ref}]` : ''}`,
    data: { stage: 'action', method: first!.method },
  });
  const result = await runActions(session, actions, {
    timeoutMs: req.timeoutMs,
    settleMs: req.settleMs,
    maxTokens: req.maxTokens,
    variables,
    policy: defaults,
    signal: ctx.signal,
    ...(req.instruction !== undefined ? { instruction: req.instruction } : {}),
  });
  // What the client's answers last showed; the agent's own actions leave it alone (its caller sees no URL).
  const location = changedLocation(session, { url: result.url, title: result.title });
  return { ...result, ...(location ? { location } : {}), ...(usage ? { usage: usage.total } : {}) };
}
