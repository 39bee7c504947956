import { z } from 'zod';
import { AgentConfig, AgentExecuteOptions, AgentResult } from '../../core/agent/schema.js';
import { operationOutput } from '../result.js';
import { defineTool } from '../tool.js';

export const agentExecuteTool = defineTool({
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
  input: z
    .object({
      sessionId: z.string().min(1).describe('Id from session_start.'),
      agentConfig: AgentConfig.optional().describe(
        'Model and integrations: {provider, model, instructions, options {apiKey, baseURL, ...}, integrations}.',
      ),
      executeOptions: AgentExecuteOptions,
      streamResponse: z.boolean().optional().describe('Send each action as a log notification while the agent runs.'),
    })
    .strict(),
  output: AgentResult,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run: async ({ sessionId, agentConfig, executeOptions }, ctx) => {
    const outcome = await ctx.service.agentExecute(ctx.owner, sessionId, { agentConfig, executeOptions }, ctx);
    return operationOutput(outcome, (result) => ({ structured: result, text: agentSummary(result) }));
  },
});

/** The outcome and the actions taken, for clients that read the text content. */
export function agentSummary(result: AgentResult): string {
  const failed = result.actions.filter((action) => action.error !== undefined).length;
  return [
    `${result.completed ? (result.success ? 'Completed' : 'Gave up') : 'Not completed'}: ${result.message}`,
    `${result.actions.length} actions (${failed} failed): ${result.actions.map((action) => action.type).join(', ') || 'none'}.`,
  ].join('\n');
}
