import { callInput, type AnyOperation } from '../core/operations/index.js';
import type { ProgressEvent } from '../core/operation.js';
import { outcomeMeta, type Outcome, type OutcomeMeta } from '../core/outcome.js';
import type { BrowserService } from '../core/service.js';
import { parseInput } from '../core/validation.js';
import { LIBRARY_OWNER } from '../door.js';

/** What the library tells about one operation besides its result: the metadata every door carries. */
export type OperationInfo = OutcomeMeta;

export interface OperationRunOptions {
  /** Abort to stop the operation; it then rejects with a `cancelled` ServiceError. */
  signal?: AbortSignal;
  /** Receives the actionId, usage, page events and (extract) wrapped of the call. */
  onOutcome?: (info: OperationInfo) => void;
  /** Progress of operations that report it (the agent: one event per action). */
  onProgress?: (event: ProgressEvent) => void;
}

export interface LibraryCall {
  service: BrowserService;
  operation: AnyOperation;
  /** Checked against the operation's input schema (with sessionId), as MCP and REST check theirs. */
  input: Record<string, unknown>;
  run?: OperationRunOptions;
}

/**
 * The library door's one way to run an operation: the input validated by the schema of the table, the metadata
 * reported to `onOutcome` with a fresh actionId, the outcome returned with it.
 */
export async function runOperation({
  service,
  operation,
  input,
  run = {},
}: LibraryCall): Promise<Outcome<unknown> & { meta: OutcomeMeta }> {
  const { sessionId, ...rest } = parseInput(callInput(operation), input, `${operation.name} input`) as Record<string, unknown>;
  const outcome = await operation.run(rest, {
    service,
    owner: LIBRARY_OWNER,
    sessionId: typeof sessionId === 'string' ? sessionId : '',
    ctx: { signal: run.signal, progress: run.onProgress },
  });
  const meta = outcomeMeta(outcome);
  run.onOutcome?.(meta);
  return { ...outcome, meta };
}
