import { AgentExecuteListedRequest, AgentExecuteRequest, AgentResult, type AgentAction, type AgentCache } from '../agent/schema.js';
import { executeAgent } from '../replay/agent-cache.js';
import { defineSessionOperation } from './define.js';

export const agentExecuteOperation = defineSessionOperation({
  name: 'agent_execute',
  title: 'Run an autonomous browser agent',
  description:
    "Hand a multi-step task to an autonomous agent that drives the session's page with its own model until done. " +
    'executeOptions: the task as a string, or {instruction, maxSteps, ...}; write secrets as %name% and pass their ' +
    "values in variables. Returns success (the agent's own claim, unchecked), message, each action with target and " +
    'value, the final URL and title, and usage. The session is busy meanwhile.',
  summary: 'Run the autonomous agent on the session until the instruction is done or maxSteps is reached.',
  input: AgentExecuteRequest,
  output: AgentResult,
  kind: 'destructive',
  streams: true,
  mcp: { listedInput: () => AgentExecuteListedRequest },
  example: { executeOptions: 'Say done.' },
  rest: { method: 'POST', path: '/v1/sessions/{id}/agentExecute', operationId: 'SessionAgentExecute' },
  text: agentSummary,
  variables: (input) => input.executeOptions.variables,
  // Runs in the session's queue, so nothing else touches the page until it has finished; its usage stays in its result.
  work: (session, input, { service, owner, ctx }) =>
    executeAgent({ session, config: input.agentConfig ?? {}, options: input.executeOptions, service, owner, ctx }),
});

/**
 * The outcome, where the page ended and each action with its target and value, for clients that read the text content:
 * a caller's model judges the run from it without reading the page again. `success` is only what the agent's model said.
 */
function agentSummary(result: AgentResult): string {
  const failed = result.actions.filter((action) => action.error !== undefined).length;
  const { url, title } = result.metadata ?? {};
  return [
    `${result.completed ? (result.success ? 'The agent says it succeeded (its own claim; check the actions)' : 'The agent gave up') : 'Not completed'}: ${result.message}`,
    ...(typeof url === 'string' ? [`Ended on: ${typeof title === 'string' && title ? `${JSON.stringify(title)} ` : ''}${url}`] : []),
    `${result.actions.length} actions (${failed} failed)${result.actions.length ? ':' : '.'}`,
    ...result.actions.map((action, i) => `${i + 1}. ${actionLine(action)}`),
    ...(result.cache ? [cacheLine(result.cache)] : []),
  ].join('\n');
}

/** What the cache did: steps replayed and healed without the agent's model, actions it chose, and whether the run is kept. */
function cacheLine(cache: AgentCache): string {
  const kept = cache.stored ? 'kept for the next call' : `not kept: ${cache.reason ?? 'no reason given'}`;
  return `Cache: ${cache.hit ? 'a kept run was replayed' : 'no kept run'}; ${cache.replayed} steps replayed, ${cache.healed} healed, ${cache.inferred} actions by the model; ${kept}.`;
}

/** Longest line of the summary per action (an action's message is already cut at 500 characters). */
const MAX_ACTION_LINE_CHARS = 300;

/** What an action did (act's words: `Filled [3] textbox "Email" with "%email%".`), or its tool and arguments; and its error. */
function actionLine(action: AgentAction): string {
  const { method, ...rest } = action.arguments ?? {};
  const what = action.message || `${action.type} ${JSON.stringify(method === action.type ? rest : (action.arguments ?? {}))}`;
  // A message beside an error: several actions in one call, the error saying which one failed (`action 2 failed: ...`).
  const line = action.error === undefined ? what : action.message ? `${what} Then ${action.error}` : `${what}: failed: ${action.error}`;
  const one = line.replace(/\s+/g, ' ');
  return one.length <= MAX_ACTION_LINE_CHARS ? one : `${one.slice(0, MAX_ACTION_LINE_CHARS - 1)}…`;
}
