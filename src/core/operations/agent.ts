import { AgentExecuteRequest, AgentResult } from '../agent/schema.js';
import { defineOperation } from './define.js';

export const agentExecuteOperation = defineOperation({
  name: 'agent_execute',
  title: 'Run an autonomous browser agent',
  description:
    "Hand a multi-step task to an autonomous agent that drives the session's page itself (open URLs, click, type, " +
    'select, scroll, read) with its own model until done. executeOptions is the task as a string, or {instruction, ' +
    'maxSteps (default 20), autoScreenshot, waitBetweenActions (ms), context, variables}; ' +
    'write secrets as %name% in the instruction and pass their values in variables so the model never sees them. ' +
    'agentConfig picks provider/model and MCP integrations (server URLs) whose tools the agent may also call. ' +
    'Returns success, completed, a message with the outcome, every action taken, and token usage. ' +
    'Takes minutes on long tasks; the session is busy meanwhile.',
  summary: 'Run the autonomous agent on the session until the instruction is done or maxSteps is reached.',
  input: AgentExecuteRequest,
  output: AgentResult,
  kind: 'destructive',
  streams: true,
  rest: { method: 'POST', path: '/v1/sessions/{id}/agentExecute', operationId: 'SessionAgentExecute' },
  text: agentSummary,
  run: (input, { service, owner, sessionId, ctx }) => service.agentExecute(owner, sessionId, input, ctx),
});

/** The outcome and the actions taken, for clients that read the text content. */
function agentSummary(result: AgentResult): string {
  const failed = result.actions.filter((action) => action.error !== undefined).length;
  return [
    `${result.completed ? (result.success ? 'Completed' : 'Gave up') : 'Not completed'}: ${result.message}`,
    `${result.actions.length} actions (${failed} failed): ${result.actions.map((action) => action.type).join(', ') || 'none'}.`,
  ].join('\n');
}
