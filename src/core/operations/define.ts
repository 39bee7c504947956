import { z } from 'zod';
import { ServiceError } from '../errors.js';
import type { PageLocation } from '../location.js';
import type { OperationContext, ProgressEvent } from '../operation.js';
import type { OperationOutcome } from '../outcome.js';
import type { BrowserService, Produced, SessionWork, WorkCall } from '../service.js';
import type { Session } from '../sessions.js';
import type { Usage } from '../usage.js';

/**
 * One operation, declared once: every door (MCP tools, REST routes, OpenAPI, SSE, forwarding to peers, the library)
 * is generated from these declarations (src/core/operations/index.ts lists them). No door imports here.
 */

/** What an operation does to the world; MCP annotations and retry safety derive from it. */
export type OperationKind = 'read' | 'action' | 'destructive';

/** Where an operation stands in each door besides its own MCP tool. */
export interface McpPlacement {
  /**
   * Folded into another operation's MCP tool to save tool-list tokens: that tool gains `operation: "<name>"` and
   * this operation's fields (docs/operations.md). The REST route and the library call stay the operation's own.
   */
  foldInto?: string;
  /** Defaults the MCP door alone applies, shown in its input schema: MCP clients drop big results (`{maxTokens: 20000}`). */
  defaults?: Record<string, unknown>;
  /**
   * The input as tools/list shows it on a server with this config, where it differs from `input`: a bound the operator
   * sets (session_start's timeoutMs, at most --session-idle-timeout), or without a wire alias no model needs (the
   * Python client's snake_case names). Calls are still checked against `input`, and the core. `config` is undefined for
   * a listing made without a server (tests, the manifest).
   */
  listedInput?(config: ListingConfig | undefined): z.ZodObject;
}

/** What of the server's config tools/list depends on. */
export type ListingConfig = Pick<BrowserService['config'], 'sessionIdleTimeoutMs'>;

/** An operation that answers bytes (a screenshot, a recording): REST sends the bytes, MCP an image or resource block. */
export interface BinaryAnswer<O> {
  /** The media types REST may answer. */
  mediaTypes: readonly string[];
  /** Response headers of the REST answer carrying fields of the JSON part: `{width: 'x-image-width'}`. */
  headers?: Partial<Record<keyof O & string, string>>;
}

/** The result of a binary operation: the bytes, their media type, and the JSON part (`output`). */
export interface BinaryResult<O = Record<string, unknown>> {
  bytes: Buffer;
  mediaType: string;
  info: O;
}

export interface OperationCall {
  service: BrowserService;
  /** Scope of the caller's sessions. */
  owner: string;
  /** The session, for operations with `session: true`. */
  sessionId: string;
  ctx: OperationContext;
}

export interface OperationDefinition<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
  R = z.infer<O>,
  N extends string = string,
> {
  /** The MCP tool name and the library's call name, snake_case: `agent_execute`. */
  name: N;
  title: string;
  /** Written for a model (the MCP tool description): what it does, when to use it, what it returns. Keep it short. */
  description: string;
  /** The REST summary; defaults to the description. */
  summary?: string;
  /** Input besides `sessionId` (the same schema validates MCP arguments, REST bodies and library calls). */
  input: I;
  /** The result's JSON (MCP structuredContent, REST data.result); for binary answers the part besides the bytes. */
  output: O;
  kind: OperationKind;
  /** Needs a session: MCP and the library take `sessionId`, REST has it in the path (default true). */
  session?: boolean;
  /** Reaches the open web (MCP openWorldHint); default true for session operations. */
  openWorld?: boolean;
  /** Same input, same effect: safe to retry (MCP idempotentHint; the Python client retries such calls). */
  idempotent?: boolean;
  rest: {
    method: 'GET' | 'POST';
    /** Path, `{id}` for the session: `/v1/sessions/{id}/navigate`. GET operations read their input from the query. */
    path: string;
    operationId: string;
    /** Largest body, bytes (default the REST door's 1 MiB). */
    bodyLimit?: number;
    /** Answers within seconds: a peer that has not answered in QUICK_HEADERS_TIMEOUT_MS is down. */
    quick?: boolean;
    /** Former routes still served for one release, marked deprecated in the OpenAPI document. */
    aliases?: Array<{ path: string; operationId: string; until: string }>;
  };
  /**
   * How the result is answered. `outcome` (default): the result with its metadata {actionId, usage?, pageEvents,
   * wrapped?}. `plain`: session management, the result alone (REST `data`, MCP structuredContent). `envelope`: the
   * service interface's `{success, data: {result, actionId}}` as the library's answer (navigate).
   * `body`: REST answers the result itself as its body (`{success: true}`).
   */
  answer?: 'outcome' | 'plain' | 'envelope' | 'body';
  /**
   * Reports progress while it runs: MCP progress notifications (log messages on `streamResponse: true` without a
   * progressToken), REST Server-Sent Events on request; both doors take `streamResponse`.
   */
  streams?: boolean;
  /** Set for operations answering bytes; `run` then resolves to a BinaryResult whose `info` is the `output`. */
  binary?: BinaryAnswer<z.infer<O>>;
  /** Lists span the peer instances: this field of the result is concatenated across them (`sessions`). */
  spansPeers?: string;
  mcp?: McpPlacement;
  /** A cheap valid input (besides sessionId): test/operations.test.ts runs it through every door. */
  example?: Record<string, unknown>;
  /** Text content for clients that do not read structuredContent; default the JSON of the result. */
  text?(result: z.infer<O>, outcome: OperationOutcome<unknown>): string | undefined;
  /**
   * MCP structuredContent where it is not the result (the default): the facts a program needs beside the text
   * (where the page is, what the call did), never a second copy of the page text that the text content carries.
   * `output` is its schema (tools/list outputSchema). REST and the library still answer the whole result.
   */
  structured?: StructuredFacts<z.infer<O>>;
  run(input: z.infer<I>, call: OperationCall): Promise<OperationOutcome<R>>;
}

/** An operation's MCP structuredContent, when it is not the result itself: its schema, and how it is read off the result. */
export interface StructuredFacts<T> {
  output: z.ZodType;
  of(result: T, outcome: OperationOutcome<unknown>): Record<string, unknown>;
}

export type AnyOperation = OperationDefinition<z.ZodObject, z.ZodType, unknown>;

/** An operation that runs nothing in a session's queue (session management, profiles, the log): its `run` is all. */
export function defineOperation<I extends z.ZodObject, O extends z.ZodType, R = z.infer<O>, N extends string = string>(
  operation: OperationDefinition<I, O, R, N>,
): OperationDefinition<I, O, R, N> {
  return {
    ...operation,
    run: async (input, call) => {
      refuseDenied(operation.name, call.service.config);
      return operation.run(input, call);
    },
  };
}

/** Whether the operator turned this operation off (--operations-denied): MCP leaves it out of tools/list. */
export function isDenied(name: string, config: Pick<BrowserService['config'], 'operationsDenied'>): boolean {
  return config.operationsDenied?.includes(name) ?? false;
}

/**
 * `operation_not_allowed` for an operation the operator turned off. Every operation's `run` starts here (both
 * constructors below make it so), and every door runs operations through `run`: one rule for MCP, REST and the library.
 */
function refuseDenied(name: string, config: BrowserService['config']): void {
  if (isDenied(name, config))
    throw new ServiceError(
      'operation_not_allowed',
      `The operation ${name} is turned off on this server (the operator's --operations-denied); do without it.`,
      { details: { operation: name } },
    );
}

/** A session operation as declared: everything but `run`, and its `work` on the session instead. */
export interface SessionOperationDefinition<I extends z.ZodObject, O extends z.ZodType, R, N extends string> extends Omit<
  OperationDefinition<I, O, R, N>,
  'run'
> {
  /** The operation itself, given the session in its queue; the service logs, traces and times it (`BrowserService.run`). */
  work(session: Session, input: z.infer<I>, call: WorkCall): Promise<Produced<NoInfer<R>>>;
  variables?(input: z.infer<I>): Record<string, string | { value: string }> | undefined;
  logged?: false;
}

export type SessionOperation<I extends z.ZodObject, O extends z.ZodType, R, N extends string> = OperationDefinition<I, O, R, N> &
  SessionWork<z.infer<I>, R>;

/**
 * An operation on a session's page: it gives only its `work`; `run` (what every door calls) runs that work through
 * `BrowserService.run`, in the session's queue, in the action log and the trace under the operation's name.
 */
export function defineSessionOperation<I extends z.ZodObject, O extends z.ZodType, R = z.infer<O>, N extends string = string>(
  operation: SessionOperationDefinition<I, O, R, N>,
): SessionOperation<I, O, R, N> {
  const defined: SessionOperation<I, O, R, N> = {
    ...operation,
    run: async (input, { service, owner, sessionId, ctx }) => {
      refuseDenied(operation.name, service.config);
      return service.run(defined, owner, sessionId, input, ctx);
    },
  };
  return defined;
}

/** The progress a read of the page reports as it starts (observe, extract): a streamed call hears from it before its answer. */
export const READING: ProgressEvent = { message: 'reading the page', data: { stage: 'reading' } };

/** A result that carries the usage and the page's location hands them to the outcome, where every door reports them. */
export function produced<T extends { usage?: Usage; location?: PageLocation }>({
  usage,
  location,
  ...result
}: T): Produced<Omit<T, 'usage' | 'location'>> {
  return { result, ...(usage ? { usage } : {}), ...(location ? { location } : {}) };
}

/** `sessionId` as every door but REST (which has it in the path) takes it; session_start's description says where it comes from. */
export const SessionIdField = z.string().min(1);

/** The input every door but REST validates: `sessionId` plus the operation's own fields (`own`: as listed for a config). */
export function callInput(operation: AnyOperation, own: z.ZodObject = operation.input): z.ZodObject {
  if (operation.session === false) return own;
  return own.extend({ sessionId: SessionIdField });
}

/**
 * The input the MCP door validates: `callInput` with the operation's MCP-only defaults (`own`: as listed instead), and
 * `streamResponse` on every operation that streams, as REST takes it (progress as log messages without a progressToken).
 */
export function mcpInput(operation: AnyOperation, own: z.ZodObject = operation.input): z.ZodObject {
  const called = callInput(operation, own);
  const input =
    operation.streams && !('streamResponse' in called.shape) ? called.extend({ streamResponse: z.boolean().optional() }) : called;
  const defaults = operation.mcp?.defaults;
  if (!defaults) return input;
  const shape: Record<string, z.ZodType> = {};
  for (const [key, value] of Object.entries(defaults)) {
    const field = input.shape[key] as z.ZodType;
    const inner = field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field;
    shape[key] = inner.default(value as never);
  }
  return input.extend(shape);
}

/**
 * The input tools/list shows on a server with this config: `mcpInput`, as `mcp.listedInput` lists it. Without
 * `streamResponse`: streaming is the client program's choice (a progressToken), not its model's, and a field listed
 * on every streaming tool costs tokens on every turn.
 */
export function listedInput(operation: AnyOperation, config?: ListingConfig): z.ZodObject {
  const input = mcpInput(operation, operation.mcp?.listedInput?.(config) ?? operation.input);
  return 'streamResponse' in input.shape ? input.omit({ streamResponse: true }) : input;
}

export function needsSession(operation: AnyOperation): boolean {
  return operation.session !== false;
}

/** MCP annotations from the kind: one rule, not four hand-set booleans per tool. */
export function annotationsOf(operation: AnyOperation): {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
} {
  return {
    readOnlyHint: operation.kind === 'read',
    destructiveHint: operation.kind === 'destructive',
    idempotentHint: operation.idempotent ?? false,
    openWorldHint: operation.openWorld ?? needsSession(operation),
  };
}

/** An operation call another server instance may answer instead of this one (MCP calls for a peer's session). */
export interface RemoteCall {
  operation: AnyOperation;
  /** The operation's input, valid against its schema; `sessionId` apart. */
  input: Record<string, unknown>;
  sessionId?: string;
  /** Headers of the HTTP request that carried the call (streamable HTTP only). */
  headers?: Record<string, string | string[] | undefined>;
  signal: AbortSignal;
  /** Runs the call here; lists that span the instances (`spansPeers`) call it too. */
  local(): Promise<OperationOutcome<unknown>>;
}

/** A remote answer: the outcome, the id the other instance gave it, and peers that did not answer a spanning list. */
export interface RemoteAnswer {
  outcome: OperationOutcome<unknown>;
  actionId?: string;
  unavailable?: string[];
}
