import { z } from 'zod';
import { ServiceError } from '../core/errors.js';
import { ExtractOptions, WRAPPED_RESULT_KEY } from '../core/extract.js';
import type { Usage } from '../core/usage.js';
import { needsWrapping } from '../core/extract-schema.js';
import type { BrowserService } from '../core/service.js';

/** ExtractOptions of the library: the schema may be a zod schema (the result is then typed by it) or a JSON Schema. */
export type LibraryExtractOptions<S = z.ZodType | Record<string, unknown>> = Omit<ExtractOptions, 'schema'> & { schema?: S };

export type ZodSchema = z.ZodType;
export type Infer<S extends z.ZodType> = z.output<S>;

export interface ExtractRunOptions {
  /** Abort to stop waiting for the page and the model; extract then rejects with `cancelled`. */
  signal?: AbortSignal;
  /** Receives the token usage and inference time of the call (not called for the pageText form). */
  onUsage?: (usage: Usage) => void;
}

/** page.extract: zod schemas become JSON Schema for the core, and the core's answer is checked again by zod and unwrapped. */
export async function libraryExtract(
  service: BrowserService,
  owner: string,
  sessionId: string,
  options: string | LibraryExtractOptions | undefined,
  run: ExtractRunOptions = {},
): Promise<unknown> {
  const given: LibraryExtractOptions = typeof options === 'string' ? { instruction: options } : (options ?? {});
  const zodSchema = given.schema instanceof z.ZodType ? given.schema : undefined;
  const schema = zodSchema
    ? (z.toJSONSchema(zodSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>)
    : (given.schema as Record<string, unknown> | undefined);
  const parsed = ExtractOptions.safeParse({ ...given, schema });
  if (!parsed.success) throw new ServiceError('invalid_argument', `Invalid extract options: ${z.prettifyError(parsed.error)}`);
  const { result } = await service.extract(owner, sessionId, parsed.data, { signal: run.signal });
  if (result.usage) run.onUsage?.(result.usage);
  if (!schema) return result.result;
  const value = needsWrapping(schema) ? result.result[WRAPPED_RESULT_KEY] : result.result;
  if (!zodSchema) return value;
  // Refinements and transforms have no JSON Schema form; zod has the last word.
  const checked = zodSchema.safeParse(value);
  if (!checked.success)
    throw new ServiceError('extraction_invalid', `The extracted data does not match the zod schema: ${z.prettifyError(checked.error)}`, {
      details: { errors: checked.error.issues },
    });
  return checked.data;
}
