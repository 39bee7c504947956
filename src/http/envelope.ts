import type { AnyOperation, BinaryResult } from '../core/operations/index.js';
import { outcomeMeta, type Outcome } from '../core/outcome.js';

/** The REST door's one envelope builder: every success body is `{success: true, data}`. */
export function ok<D>(data: D): { success: true; data: D } {
  return { success: true, data };
}

/**
 * The body of an operation, by its answer form: `{success, data: {result, actionId, usage?, pageEvents, wrapped?}}`
 * with a fresh actionId; session management's `{success, data: result}`; or the result itself (`{success: true}`).
 * A binary operation answers its bytes, or with `json` the same envelope with the bytes in `contentBase64`.
 */
export function operationBody(operation: AnyOperation, outcome: Outcome<unknown>, json = false): unknown {
  const answer = operation.answer ?? 'outcome';
  if (answer === 'body') return outcome.result;
  if (answer === 'plain') return ok(outcome.result);
  const meta = outcomeMeta(outcome);
  if (!operation.binary) return ok({ result: outcome.result, ...meta });
  const { bytes, mediaType, info } = outcome.result as BinaryResult;
  if (json) return ok({ result: info, contentBase64: bytes.toString('base64'), mediaType, ...meta });
  const headers: Record<string, string> = { 'x-action-id': meta.actionId };
  for (const [field, header] of Object.entries(operation.binary.headers ?? {}))
    headers[header as string] = String((info as Record<string, unknown>)[field]);
  if (meta.pageEvents.length) headers['x-page-events'] = asciiJson(meta.pageEvents);
  if (meta.usage) headers['x-usage'] = asciiJson(meta.usage);
  return new BinaryBody(mediaType, bytes, headers);
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

/** True when the caller asked for JSON and not for the bytes (`Accept: application/json`). */
export function wantsJson(accept: string | undefined, mediaTypes: readonly string[]): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  return types.includes('application/json') && !types.some((type) => mediaTypes.includes(type) || type === '*/*' || type === 'image/*');
}

/** JSON with every non-ASCII character escaped, so it can travel in a header. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
