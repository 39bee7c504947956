import { z } from 'zod';
import type { AnyOperation } from './core/operations/index.js';
import { OutcomeMetaSchema, type OutcomeMeta } from './core/outcome.js';

/** What the doors (MCP, REST, library) share and the core has no use for: owner scopes and answer shapes. */

/** Owner of the sessions of the one local client: stdio, and HTTP when it runs without API keys. */
export const LOCAL_OWNER = 'local';

/** Owner of the sessions opened through the in-process library. */
export const LIBRARY_OWNER = 'library';

/** The service interface's `{success, data: {result, actionId}}` (navigate over MCP and in the library). */
export function interfaceEnvelopeSchema(result: z.ZodType) {
  return z
    .object({
      success: z.boolean(),
      data: z.object({ result, actionId: z.string().describe('Id of this operation, made by the door that ran it.') }).strict(),
    })
    .strict();
}

export function interfaceEnvelope<T>(
  result: T,
  meta: Pick<OutcomeMeta, 'actionId'>,
): { success: true; data: { result: T; actionId: string } } {
  return { success: true, data: { result, actionId: meta.actionId } };
}

/** The REST body of an operation: `{success, data: {result, actionId, usage?, pageEvents, wrapped?}}`, or its plain forms. */
export function restResponseSchema(operation: AnyOperation): z.ZodType {
  switch (operation.answer ?? 'outcome') {
    case 'body':
      return operation.output;
    case 'plain': {
      const unavailable = z
        .array(z.string())
        .optional()
        .describe(
          `Server instances that did not answer; their ${operation.spansPeers} are missing from this list. Absent when all answered.`,
        );
      const data = operation.spansPeers ? (operation.output as z.ZodObject).extend({ unavailable }).strict() : operation.output;
      return z.object({ success: z.literal(true), data }).strict();
    }
    default: {
      const bytes = operation.binary
        ? { contentBase64: z.string().describe('The bytes, base64 (the JSON form of a binary answer).'), mediaType: z.string() }
        : {};
      const data = OutcomeMetaSchema.extend({ result: operation.output, ...bytes }).strict();
      return z.object({ success: z.literal(true), data }).strict();
    }
  }
}
