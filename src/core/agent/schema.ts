import { z } from 'zod';
import { Usage } from '../extract.js';

/** An MCP server the agent may use: its URL, or its URL with headers (e.g. Authorization). */
export const Integration = z.union([
  z.string().url(),
  z.object({ url: z.string().url(), headers: z.record(z.string(), z.string()).optional() }).strict(),
]);

/** AgentConfig of the service interface (2.6), as it travels over MCP and REST. Custom `tools` exist only in the library. */
export const AgentConfig = z
  .object({
    provider: z.enum(['openai', 'anthropic']).optional(),
    model: z.string().min(1).optional(),
    instructions: z.string().optional(),
    options: z.record(z.string(), z.unknown()).optional().describe('Provider options: apiKey, baseURL, organization, ...'),
    integrations: z.array(Integration).optional(),
  })
  .strict();
export type AgentConfig = z.infer<typeof AgentConfig>;

/** AgentExecuteOptions (2.7); snake_case names are accepted too. */
export const AgentExecuteOptionsObject = z
  .object({
    instruction: z.string().min(1),
    maxSteps: z.number().int().min(1).max(200).optional(),
    autoScreenshot: z.boolean().optional(),
    waitBetweenActions: z.number().int().min(0).max(60_000).optional(),
    context: z.string().optional(),
    variables: z.record(z.string(), z.string()).optional().describe('Values for %name% placeholders in the instruction; substituted after inference, never sent to the model or logged.'),
  })
  .strict();

const SNAKE_CASE: Record<string, string> = { max_steps: 'maxSteps', auto_screenshot: 'autoScreenshot', wait_between_actions: 'waitBetweenActions' };

export const AgentExecuteOptions = z.preprocess(
  (value) => {
    if (typeof value === 'string') return { instruction: value };
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value).map(([key, v]) => [SNAKE_CASE[key] ?? key, v]));
    }
    return value;
  },
  AgentExecuteOptionsObject,
);
export type AgentExecuteOptions = z.infer<typeof AgentExecuteOptionsObject>;

export const AgentAction = z.object({
  type: z.string().describe('Tool the agent used: goto, click, type, ..., done, or an integration tool.'),
  arguments: z.record(z.string(), z.unknown()).optional(),
  reasoning: z.string().optional(),
  pageUrl: z.string().optional(),
  timeMs: z.number().optional(),
  error: z.string().optional(),
});
export type AgentAction = z.infer<typeof AgentAction>;

/** AgentResult (2.8). */
export const AgentResult = z.object({
  success: z.boolean(),
  message: z.string(),
  actions: z.array(AgentAction),
  completed: z.boolean(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  usage: Usage.optional(),
});
export type AgentResult = z.infer<typeof AgentResult>;

/** Body of POST /v1/sessions/{id}/agentExecute and input of the agent_execute tool (besides sessionId). */
export const AgentExecuteRequest = z
  .object({
    agentConfig: AgentConfig.optional(),
    executeOptions: AgentExecuteOptions,
    streamResponse: z.boolean().optional(),
  })
  .strict();
export type AgentExecuteRequest = z.infer<typeof AgentExecuteRequest>;
