import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { Usage } from '../usage.js';
import { ListedVariableValue, VariableValue } from '../variables.js';

/** An MCP server the agent may use: its URL, or its URL with headers (e.g. Authorization). */
export const Integration = z.union([
  z.string().url(),
  z.object({ url: z.string().url(), headers: z.record(z.string(), z.string()).optional() }).strict(),
]);
export type IntegrationSpec = z.infer<typeof Integration>;

/** AgentConfig of the service interface (2.6), as it travels over MCP and REST. Custom `tools` exist only in the library. */
export const AgentConfig = z
  .object({
    provider: z.enum(['openai', 'anthropic']).optional(),
    model: z.string().min(1).optional(),
    instructions: z.string().optional(),
    options: z.record(z.string(), z.unknown()).optional().describe('Provider options: apiKey, baseURL, organization, ...'),
    integrations: z.array(Integration).optional().describe('MCP servers whose tools the agent may call: URLs, or {url, headers}.'),
  })
  .strict();
export type AgentConfigWire = z.infer<typeof AgentConfig>;

/** A custom tool given through the library: the model sees its description and the JSON Schema of `inputSchema`. */
export interface AgentTool<S extends z.ZodType = z.ZodType> {
  description: string;
  inputSchema: S;
  execute(args: z.infer<S>, ctx: { signal: AbortSignal }): unknown;
}

/** An integration as the library may give it: a URL, {url, headers}, or an already connected SDK Client (left open). */
export type AgentIntegration = IntegrationSpec | Client;

/** AgentConfig (2.6) in full: the wire form plus connected clients and custom tools, which only the library can pass. */
export type AgentConfig = Omit<AgentConfigWire, 'integrations'> & {
  integrations?: AgentIntegration[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool has its own argument type
  tools?: Record<string, AgentTool<any>>;
};

/** AgentExecuteOptions (2.7). */
export const AgentExecuteOptionsObject = z
  .object({
    instruction: z.string().min(1).describe('The task, in natural language.'),
    maxSteps: z.number().int().min(1).max(200).optional().describe('Most actions the agent may take (default 20).'),
    autoScreenshot: z.boolean().optional().describe('Show the model a screenshot of the page each step (default true).'),
    waitBetweenActions: z.number().int().min(0).max(60_000).optional().describe('Pause between actions, ms (default 0).'),
    context: z.string().optional().describe('Extra context or constraints for the task.'),
    variables: z
      .record(z.string().regex(/^[A-Za-z0-9_]+$/), VariableValue)
      .optional()
      .describe(
        'Values for %name% placeholders in the instruction; substituted after inference, never sent to the model or logged. {value, origins}: typed only on those origins, refused elsewhere.',
      ),
    cache: z
      .boolean()
      .optional()
      .describe('Keep a successful run and replay it next time without the model (same instruction, start URL, variable names).'),
    cacheKey: z.string().min(1).max(200).optional().describe('Or keep and find it under this key.'),
  })
  .strict();
export type AgentExecuteOptions = z.infer<typeof AgentExecuteOptionsObject>;

/** The same options with the snake_case names of the Python client accepted beside the camelCase ones. */
const AgentExecuteOptionsWire = AgentExecuteOptionsObject.extend({
  max_steps: AgentExecuteOptionsObject.shape.maxSteps,
  cache_key: AgentExecuteOptionsObject.shape.cacheKey,
  auto_screenshot: AgentExecuteOptionsObject.shape.autoScreenshot,
  wait_between_actions: AgentExecuteOptionsObject.shape.waitBetweenActions,
}).strict();

/** Execute options as any door receives them: a bare instruction string, or the object in camelCase or snake_case. */
export const AgentExecuteOptions = z.union([z.string().min(1), AgentExecuteOptionsWire]).transform((value): AgentExecuteOptions => {
  if (typeof value === 'string') return { instruction: value };
  const { max_steps, auto_screenshot, wait_between_actions, cache_key, ...rest } = value;
  return {
    ...rest,
    ...((rest.cacheKey ?? cache_key) ? { cacheKey: rest.cacheKey ?? cache_key } : {}),
    maxSteps: rest.maxSteps ?? max_steps,
    autoScreenshot: rest.autoScreenshot ?? auto_screenshot,
    waitBetweenActions: rest.waitBetweenActions ?? wait_between_actions,
  };
});

export const AgentAction = z.object({
  type: z
    .string()
    .describe(
      "act's method for an act call (click, fill, ...), else the tool: goto, extract, ask_human, done, or an integration or custom tool.",
    ),
  arguments: z.record(z.string(), z.unknown()).optional().describe('Arguments as the model gave them (variables stay as %name%).'),
  message: z
    .string()
    .optional()
    .describe('What the action did, in act\'s words with its target and value (`Filled [3] textbox "Email" with "%email%".`).'),
  reasoning: z.string().optional().describe('What the model said alongside the call.'),
  pageUrl: z.string().optional().describe('URL of the page when the action started.'),
  timeMs: z.number().optional().describe('How long the action took.'),
  error: z.string().optional().describe('Why the action failed; the model saw this and could recover.'),
});
export type AgentAction = z.infer<typeof AgentAction>;

/** What a cached run (executeOptions.cache) did: replayed, healed, inferred by the model, and whether it is kept. */
export const AgentCache = z
  .object({
    hit: z.boolean().describe('A kept run was found and replayed.'),
    replayed: z.number().int().describe('Steps done as recorded, without the model.'),
    healed: z.number().int().describe('Steps whose target one model call found again.'),
    inferred: z.number().int().describe('Actions the model chose: a fresh run, or after a step that could not be healed.'),
    stored: z.boolean().describe('This run is kept for the next call.'),
    reason: z.string().optional().describe('Why it was not kept.'),
  })
  .describe('With executeOptions.cache or cacheKey (docs/replay.md).');
export type AgentCache = z.infer<typeof AgentCache>;

/** AgentResult (2.8). */
export const AgentResult = z.object({
  success: z.boolean(),
  message: z.string(),
  actions: z.array(AgentAction),
  completed: z.boolean(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  usage: Usage.optional(),
  cache: AgentCache.optional(),
});
export type AgentResult = z.infer<typeof AgentResult>;

/** Body of POST /v1/sessions/{id}/agentExecute and input of the agent_execute tool (besides sessionId). */
export const AgentExecuteRequest = z
  .object({
    agentConfig: AgentConfig.optional().describe('Model, provider options and MCP integrations.'),
    executeOptions: AgentExecuteOptions,
    streamResponse: z.boolean().optional().describe('Send each action as a log notification while the agent runs.'),
  })
  .strict();

/** The request as tools/list shows it: executeOptions without the Python client's snake_case twins, which no model needs. */
export const AgentExecuteListedRequest = AgentExecuteRequest.extend({
  executeOptions: z.union([
    z.string().min(1),
    // A variable's {value, origins} form is said in the description: listing its fields costs 66 tokens.
    AgentExecuteOptionsObject.extend({
      variables: z
        .record(AgentExecuteOptionsObject.shape.variables.unwrap().keyType, ListedVariableValue)
        .optional()
        .describe(AgentExecuteOptionsObject.shape.variables.description!),
    }),
  ]),
});

/** What BrowserService.agentExecute takes: the wire request, or the library's richer config. */
export interface AgentExecuteRequest {
  agentConfig?: AgentConfig;
  executeOptions: AgentExecuteOptions;
  streamResponse?: boolean;
}
