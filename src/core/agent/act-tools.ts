import { z } from 'zod';
import { ServiceError } from '../errors.js';
import {
  ACT_METHODS,
  actResultText,
  Action,
  METHOD_ARGUMENTS,
  METHOD_DESCRIPTIONS,
  runAction,
  type ActMethod,
  type ActResult,
} from '../act/index.js';
import { coerceArguments } from './coerce.js';
import type { BrowserTool, ToolEnv, ToolOutcome } from './tools.js';

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
  ...ACT_METHODS.map((method) => `- ${signature(method)}: ${METHOD_DESCRIPTIONS[method]}`),
].join('\n');

/** act's Action as the model sends it; a method's arguments given beside `method` instead of inside `arguments` are taken too. */
const ActInput = Action.omit({ description: true }).loose();

/**
 * act as the agent's tool: one tool with act's method enum, act's Action as its input, run through act's own
 * pipeline (runAction). One tool rather than one per method: 655 instead of 2,377 prompt tokens each step
 * (bench/agent-tools.bench.ts, docs/agent.md).
 */
export const ACT_TOOL: BrowserTool = {
  name: 'act',
  description: ACT_DESCRIPTION,
  input: ActInput,
  run: (input, env) => runAgentAction(env, toAction(input as z.infer<typeof ActInput>)),
};

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

/** Runs the action through act's own pipeline and tells the model what it changed. */
async function runAgentAction(env: ToolEnv, action: Action): Promise<ToolOutcome> {
  const urlBefore = env.session.page.url();
  const result = await runAction(env.session, action, {
    maxTokens: AGENT_CHANGE_TOKENS,
    variables: env.variables,
    policy: env.config,
    signal: env.signal,
  });
  return { text: agentResultText(result, env.session.page.url() !== urlBefore) };
}

/**
 * act's text of the result (what was done, then the lines added and removed), with the URL when it changed; a new
 * document is not repeated here, since the next page state shows it whole.
 */
export function agentResultText(result: ActResult, urlChanged: boolean): string {
  const shown: ActResult = result.navigated ? { ...result, pageText: undefined, truncated: undefined } : result;
  const location = urlChanged || result.navigated ? { url: result.url, title: result.title } : undefined;
  const text = actResultText(shown, { location });
  return result.navigated ? `${text}\nA new page: the next page state shows it.` : text;
}
