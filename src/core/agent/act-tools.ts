import { z } from 'zod';
import { ServiceError } from '../errors.js';
import {
  ACT_METHODS,
  actResultText,
  Action,
  forAction,
  METHOD_ARGUMENTS,
  MAX_ACTIONS,
  METHOD_DESCRIPTIONS,
  runActions,
  type ActMethod,
  type ActResult,
} from '../act/index.js';
import { parseInput } from '../validation.js';
import { coerceArguments } from './coerce.js';
import { forAgent, type BrowserTool, type ToolEnv, type ToolOutcome } from './tools.js';

/** Budget for what one action changed, o200k tokens: smaller than act's default, since every result stays in the history. */
export const AGENT_CHANGE_TOKENS = 600;

/** `fill {value}`, `scroll {direction?, screens?}`: a method and its arguments' names, from act's table. */
function signature(method: ActMethod): string {
  const shape = METHOD_ARGUMENTS[method].shape as Record<string, z.ZodType>;
  const names = Object.entries(shape).map(([name, schema]) => (schema.safeParse(undefined).success ? `${name}?` : name));
  return `${method}${names.length ? ` {${names.join(', ')}}` : ''}`;
}

const ACT_DESCRIPTION = [
  'Act on the page: a method, its target (ref from the page text, or selector, or x and y in viewport CSS px) and arguments; the result says what changed.',
  `Several in one call: {actions: [{method, ref, arguments}, ...]} (at most ${MAX_ACTIONS}), in order, stopping at the first that fails.`,
  ...ACT_METHODS.map((method) => `- ${signature(method)}: ${METHOD_DESCRIPTIONS[method]}`),
].join('\n');

/** act's Action as the model sends it; a method's arguments given beside `method` instead of inside `arguments` are taken too. */
const ActInput = Action.omit({ description: true }).loose();
/** One action, or several in order (`actions`), as act takes them. */
const ActToolInput = ActInput.partial({ method: true }).extend({
  // Items checked one by one below: the model is not shown the action's schema twice.
  actions: z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_ACTIONS).optional(),
});
// Not `anyOf: [{required: [method]}, {required: [actions]}]` in the schema: Anthropic refuses a tool whose input_schema
// has anyOf at its top level. A call with neither is answered by toActions' error.

/**
 * act as the agent's tool: one tool with act's method enum, act's Action as its input, run through act's own
 * pipeline (runAction). One tool rather than one per method: 655 instead of 2,377 prompt tokens each step
 * (bench/agent-tools.bench.ts, docs/agent.md).
 */
export const ACT_TOOL: BrowserTool = {
  name: 'act',
  description: ACT_DESCRIPTION,
  input: ActToolInput,
  run: (input, env) => runAgentActions(env, toActions(input as z.infer<typeof ActToolInput>)),
};

/** The tool's input as act's actions: `actions` in order, or the one action given at the top level. */
function toActions(input: z.infer<typeof ActToolInput>): Action[] {
  const { actions, ...one } = input;
  if (actions && one.method !== undefined)
    throw new ServiceError('invalid_argument', 'Give either one action (method, target, arguments) or actions, not both.');
  if (actions) return actions.map((action, i) => forAction(i, () => toAction(parseInput(ActInput, action, 'action'))));
  if (one.method === undefined) throw new ServiceError('invalid_argument', 'act needs a method, or actions: [{method, ...}, ...].');
  return [toAction(one as z.infer<typeof ActInput>)];
}

/** The tool's input as act's Action: stray method arguments moved under `arguments`, and coerced where unambiguous. */
export function toAction(input: z.infer<typeof ActInput>): Action {
  const { method, ref, selector, x, y, arguments: given, ...rest } = input;
  const shape = METHOD_ARGUMENTS[method].shape as Record<string, unknown>;
  const unknown = Object.keys(rest).filter((name) => !(name in shape));
  if (unknown.length)
    throw new ServiceError(
      'invalid_argument',
      `act has no field ${unknown.map((name) => JSON.stringify(name)).join(', ')} for ${method}; it takes ${signature(method)}.`,
    );
  const args = coerceArguments(METHOD_ARGUMENTS[method], { ...rest, ...(given ?? {}) });
  return {
    method,
    ...(ref !== undefined ? { ref } : {}),
    ...(selector !== undefined ? { selector } : {}),
    ...(x !== undefined ? { x } : {}),
    ...(y !== undefined ? { y } : {}),
    ...(Object.keys(args).length ? { arguments: args } : {}),
  };
}

/** Runs the actions through act's own pipeline and tells the model what they changed. */
async function runAgentActions(env: ToolEnv, actions: Action[]): Promise<ToolOutcome> {
  const urlBefore = env.session.page.url();
  const result = await runActions(env.session, actions, {
    maxTokens: AGENT_CHANGE_TOKENS,
    variables: env.variables,
    policy: env.config,
    signal: env.signal,
  });
  const failed = result.failed && `action ${result.failed.step} failed: ${result.failed.code}: ${forAgent(result.failed.message)}`;
  return {
    text: agentResultText(result, env.session.page.url() !== urlBefore),
    // Several actions: each one's own words, not "Did 3 actions." (the one that failed is the error).
    did: result.steps ? result.steps.map((step) => step.message).join(' ') : result.message,
    ...(failed ? { error: failed } : {}),
  };
}

/**
 * act's text of the result (what was done, then the page's change), with the URL when it changed; a page answered
 * whole (a new document, a change that costs more than the page) is not repeated here: the next page state shows it.
 */
export function agentResultText(result: ActResult, urlChanged: boolean): string {
  // The page's text (a new page, or a change that costs more than the page) is in the next page state, whole.
  const whole = result.pageText !== undefined;
  const own = result.failed ? { ...result, failed: { ...result.failed, message: forAgent(result.failed.message) } } : result;
  const shown: ActResult = whole ? { ...own, pageText: undefined, diff: undefined, truncated: undefined } : own;
  const location = urlChanged || result.navigated ? { url: result.url, title: result.title } : undefined;
  const text = actResultText(shown, { location });
  if (!whole) return text;
  return `${text}\n${result.navigated ? 'A new page' : 'The page changed throughout'}: the next page state shows it.`;
}
