import { runAgent } from '../agent/loop.js';
import { AgentExecuteListedRequest, AgentExecuteRequest, AgentResult } from '../agent/schema.js';
import { defineSessionOperation } from './define.js';

export const agentExecuteOperation = defineSessionOperation({
  name: 'agent_execute',
  title: 'Run an autonomous browser agent',
  description:
    "Hand a multi-step task to an autonomous agent that drives the session's page with its own model until done. " +
    'executeOptions: the task as a string, or {instruction, maxSteps, ...}; write secrets as %name% and pass their ' +
    'values in variables. Returns success, message, the actions taken and token usage. The session is busy meanwhile.',
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
  work: async (session, input, { service, ctx }) => ({
    result: await runAgent({
      session,
      config: input.agentConfig ?? {},
      options: input.executeOptions,
      deps: { config: service.config, live: service.live },
      ctx,
    }),
  }),
});

/** The outcome and the actions taken, for clients that read the text content. */
function agentSummary(result: AgentResult): string {
  const failed = result.actions.filter((action) => action.error !== undefined).length;
  return [
    `${result.completed ? (result.success ? 'Completed' : 'Gave up') : 'Not completed'}: ${result.message}`,
    `${result.actions.length} actions (${failed} failed): ${result.actions.map((action) => action.type).join(', ') || 'none'}.`,
  ].join('\n');
}
