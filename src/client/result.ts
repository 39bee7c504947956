import type { Outcome } from '../core/service.js';
import type { PageEvent } from '../core/sessions.js';
import type { Usage } from '../core/usage.js';

/** What the library tells about one operation besides its result. */
export interface OperationInfo {
  actionId: string;
  /** Token usage of the model calls, when there were any (the agent's is in its result). */
  usage?: Usage;
  /** What the page did meanwhile: dialogs answered, popups closed, crashes. */
  pageEvents: PageEvent[];
}

export interface OperationRunOptions {
  /** Abort to stop the operation; it then rejects with a `cancelled` ServiceError. */
  signal?: AbortSignal;
  /** Receives the actionId, usage and page events of the call. */
  onOutcome?: (info: OperationInfo) => void;
}

/** The library door's one result helper: the core's actionId, reported with the metadata; the plain result goes back. */
export function settle<T>(outcome: Outcome<T>, run: OperationRunOptions = {}): { result: T; actionId: string } {
  const { actionId } = outcome;
  run.onOutcome?.({ actionId, pageEvents: outcome.pageEvents, ...(outcome.usage ? { usage: outcome.usage } : {}) });
  return { result: outcome.result, actionId };
}
