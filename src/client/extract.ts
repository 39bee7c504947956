import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import type { ExtractOptions } from '../core/extract.js';
import { WRAPPED_RESULT_KEY } from '../core/extract-schema.js';
import { extractOperation } from '../core/operations/extract.js';
import type { BrowserService } from '../core/service.js';
import type { Usage } from '../core/usage.js';
import { describeIssues, toJsonSchema } from '../core/validation.js';
import { runOperation, type OperationRunOptions } from './result.js';

/** ExtractOptions of the library: the schema may be a zod schema (the result is then typed by it) or a JSON Schema. */
export type LibraryExtractOptions<S = z.ZodType | Record<string, unknown>> = Omit<ExtractOptions, 'schema'> & { schema?: S };

export type ZodSchema = z.ZodType;
export type Infer<S extends z.ZodType> = z.output<S>;

export interface ExtractRunOptions extends OperationRunOptions {
  /** Receives the token usage and inference time of the call (not called for the pageText form). */
  onUsage?: (usage: Usage) => void;
}

export interface LibraryExtractCall {
  service: BrowserService;
  sessionId: string;
  options: string | LibraryExtractOptions | undefined;
  run?: ExtractRunOptions;
}

/**
 * page.extract: zod schemas become JSON Schema for the core; the library answers the raw value (the core says whether
 * a schema was an object schema), checked again by zod when the schema was one.
 */
export async function libraryExtract({ service, sessionId, options, run = {} }: LibraryExtractCall): Promise<unknown> {
  const given: LibraryExtractOptions = typeof options === 'string' ? { instruction: options } : (options ?? {});
  const zodSchema = given.schema instanceof z.ZodType ? given.schema : undefined;
  const schema = zodSchema ? toJsonSchema(zodSchema, 'input') : given.schema;
  const input = { ...given, ...(schema !== undefined ? { schema } : {}), sessionId };
  const outcome = await runOperation({ service, operation: extractOperation, input, run });
  if (outcome.usage) run.onUsage?.(outcome.usage);
  // Every door answers objects; the library answers the data itself, also for non-object schemas.
  const result = outcome.wrapped ? (outcome.result as Record<string, unknown>)[WRAPPED_RESULT_KEY] : outcome.result;
  if (!zodSchema) return result;
  // Refinements and transforms have no JSON Schema form; zod has the last word.
  const checked = zodSchema.safeParse(result);
  if (!checked.success) {
    const { issues, summary } = describeIssues(checked.error);
    throw new ServiceError('extraction_invalid', `The extracted data does not match the zod schema: ${summary}`, { details: { issues } });
  }
  return checked.data;
}
