import { z } from 'zod';
import { ServiceError } from './errors.js';
import type { OperationContext } from './operation.js';
import type { Session } from './sessions.js';

/** ExtractOptions of the service interface (2.9). `schema` is a JSON Schema over MCP and REST. */
export const ExtractOptions = z
  .object({
    instruction: z.string().min(1).optional().describe('What to extract, in natural language.'),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the result; the answer is validated against it.'),
    selector: z.string().min(1).optional().describe('XPath (optionally prefixed "xpath=") limiting the page to one subtree.'),
    iframes: z.boolean().optional().describe('Include iframe content (default false).'),
    modelName: z.string().min(1).optional().describe('Model for this call, e.g. "openai/gpt-4.1-mini" or "anthropic/claude-sonnet-4-5".'),
    modelClientOptions: z.record(z.string(), z.unknown()).optional().describe('Model client options: apiKey, baseURL, organization, ...'),
    domSettleTimeoutMs: z.number().int().min(0).max(300_000).optional().describe('Longest wait for the DOM to settle before reading, ms (default 30000).'),
  })
  .strict();
export type ExtractOptions = z.infer<typeof ExtractOptions>;

/** Token and timing metrics, in the interface's field names (2.8). */
export const Usage = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  reasoning_tokens: z.number().optional(),
  cached_input_tokens: z.number().optional(),
  inference_time_ms: z.number(),
});
export type Usage = z.infer<typeof Usage>;

/** `{pageText}`, `{extraction}`, or an object valid against the caller's schema (2.10). */
export const ExtractResult = z.record(z.string(), z.unknown());
export type ExtractResult = Record<string, unknown>;

export interface ExtractOutcome {
  result: ExtractResult;
  /** Absent when no model was called (the pageText form). */
  usage?: Usage;
}

export async function extract(_session: Session, _options: ExtractOptions, _ctx: OperationContext = {}): Promise<ExtractOutcome> {
  throw new ServiceError('not_implemented', 'extract is not available yet.');
}
