import { z } from 'zod';
import type { AnyOperation, BinaryResult, RemoteAnswer } from './core/operations/index.js';
import { outcomeMeta, OutcomeMetaSchema, type OperationOutcome, type OutcomeMeta } from './core/outcome.js';

/** What the doors (MCP, REST, library) share and the core has no use for: owner scopes and answer shapes. */

/** Owner of the sessions of the one local client: stdio, and HTTP when it runs without API keys. */
export const LOCAL_OWNER = 'local';

/** Owner of the sessions opened through the in-process library. */
export const LIBRARY_OWNER = 'library';

/** The service interface's `{success, data: {result, actionId}}` (navigate in the library). */
function interfaceEnvelopeSchema(result: z.ZodType) {
  return z
    .object({
      success: z.boolean(),
      data: z.object({ result, actionId: z.string().describe('Id of this operation, made by the door that ran it.') }).strict(),
    })
    .strict();
}

/**
 * One way an operation answers (its `answer`), declared once for every door: the REST body and its schema, the
 * outcome read back from a peer's REST body (forwarding), and the structured answer of MCP and the library.
 * A binary operation's REST body here is its JSON form (the bytes in `contentBase64`); the REST door may answer the
 * bytes themselves instead (http/envelope.ts).
 */
export interface AnswerForm {
  /** Whether the answer carries the outcome's metadata {actionId, usage?, pageEvents, wrapped?}. */
  carriesMeta: boolean;
  restSchema(operation: AnyOperation): z.ZodType;
  toRest(operation: AnyOperation, outcome: OperationOutcome<unknown>): unknown;
  fromRest(operation: AnyOperation, body: unknown): RemoteAnswer;
  /** The library's answer, and MCP structuredContent of an operation that declares no `structured` facts of its own. */
  structuredSchema(operation: AnyOperation): z.ZodType;
  structured(result: unknown, meta: OutcomeMeta | undefined): unknown;
}

const BYTES_FIELDS = {
  contentBase64: z.string().describe('The bytes, base64 (the JSON form of a binary answer).'),
  mediaType: z.string(),
};

/** `result` as REST carries it: a binary result's JSON part, with its bytes beside it in base64. */
function restResult(operation: AnyOperation, result: unknown): Record<string, unknown> {
  if (!operation.binary) return { result };
  const { bytes, mediaType, info } = result as BinaryResult;
  return { result: info, contentBase64: bytes.toString('base64'), mediaType };
}

/** The result again from REST's `data`: a binary one's bytes from base64. */
function resultFromRest(operation: AnyOperation, data: Record<string, unknown>): unknown {
  if (!operation.binary) return data.result;
  const info = (data.result ?? {}) as Record<string, unknown>;
  return { info, bytes: Buffer.from(String(data.contentBase64 ?? ''), 'base64'), mediaType: String(data.mediaType) } satisfies BinaryResult;
}

const dataOf = (body: unknown) => ((body as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>;

/** `{success, data: {result, actionId, usage?, pageEvents, wrapped?}}`: what an operation on a page answers. */
const OUTCOME: AnswerForm = {
  carriesMeta: true,
  restSchema: (operation) =>
    z
      .object({
        success: z.literal(true),
        data: OutcomeMetaSchema.extend({ result: operation.output, ...(operation.binary ? BYTES_FIELDS : {}) }).strict(),
      })
      .strict(),
  toRest: (operation, outcome) => ({ success: true, data: { ...restResult(operation, outcome.result), ...outcomeMeta(outcome) } }),
  fromRest: (operation, body) => {
    const data = dataOf(body);
    const { actionId, usage, pageEvents, wrapped } = data as Partial<OutcomeMeta>;
    return {
      actionId,
      outcome: {
        result: resultFromRest(operation, data),
        pageEvents: pageEvents ?? [],
        ...(usage ? { usage } : {}),
        ...(wrapped !== undefined ? { wrapped } : {}),
      },
    };
  },
  structuredSchema: (operation) => operation.output,
  structured: (result) => result,
};

/** As `outcome` over REST; in the library, the service interface's `{success, data: {result, actionId}}` (navigate). */
const ENVELOPE: AnswerForm = {
  ...OUTCOME,
  structuredSchema: (operation) => interfaceEnvelopeSchema(operation.output),
  structured: (result, meta) => ({ success: true, data: { result, actionId: meta!.actionId } }),
};

/** Session management: `{success, data: result}` with no metadata (a binary one: `{success, data: {result, contentBase64, mediaType}}`). */
const PLAIN: AnswerForm = {
  carriesMeta: false,
  restSchema: (operation) => {
    if (operation.binary)
      return z.object({ success: z.literal(true), data: z.object({ result: operation.output, ...BYTES_FIELDS }).strict() }).strict();
    const unavailable = z
      .array(z.string())
      .optional()
      .describe(
        `Server instances that did not answer; their ${operation.spansPeers} are missing from this list. Absent when all answered.`,
      );
    const data = operation.spansPeers ? (operation.output as z.ZodObject).extend({ unavailable }).strict() : operation.output;
    return z.object({ success: z.literal(true), data }).strict();
  },
  toRest: (operation, outcome) => ({ success: true, data: operation.binary ? restResult(operation, outcome.result) : outcome.result }),
  fromRest: (operation, body) => {
    const data = dataOf(body);
    return { outcome: { result: operation.binary ? resultFromRest(operation, data) : data, pageEvents: [] } };
  },
  structuredSchema: (operation) => operation.output,
  structured: (result) => result,
};

/** REST answers the result itself as its body (`{success: true}`). */
const BODY: AnswerForm = {
  carriesMeta: false,
  restSchema: (operation) => operation.output,
  toRest: (_operation, outcome) => outcome.result,
  fromRest: (_operation, body) => ({ outcome: { result: body, pageEvents: [] } }),
  structuredSchema: (operation) => operation.output,
  structured: (result) => result,
};

const ANSWER_FORMS: Record<NonNullable<AnyOperation['answer']>, AnswerForm> = {
  outcome: OUTCOME,
  envelope: ENVELOPE,
  plain: PLAIN,
  body: BODY,
};

/** How an operation answers, on every door. */
export function answerForm(operation: AnyOperation): AnswerForm {
  return ANSWER_FORMS[operation.answer ?? 'outcome'];
}
