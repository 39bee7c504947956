import type { Outcome } from '../core/service.js';

/** The REST door's one envelope builder: every success body is `{success: true, data}`. */
export function ok<D>(data: D): { success: true; data: D } {
  return { success: true, data };
}

/** The body of an operation: `{success, data: {result, actionId, usage?}}`, with the actionId the core logged and traced. */
export function operationBody(outcome: Outcome<unknown>, result: unknown = outcome.result) {
  return ok({ result, actionId: outcome.actionId, ...(outcome.usage ? { usage: outcome.usage } : {}) });
}

/** A success answered as bytes with their content type (screenshot) rather than the JSON envelope. */
export class BinaryBody {
  constructor(
    readonly contentType: string,
    readonly body: Buffer,
    /** Metadata the JSON envelope would have carried, as response headers. */
    readonly headers: Record<string, string> = {},
  ) {}
}
