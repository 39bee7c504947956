import type { AnyOperation, BinaryResult } from '../core/operations/index.js';
import { answerForm } from '../door.js';
import { outcomeMeta, type OperationOutcome } from '../core/outcome.js';

/** The REST door's one envelope builder: every success body is `{success: true, data}`. */
export function ok<D>(data: D): { success: true; data: D } {
  return { success: true, data };
}

/**
 * The body of an operation, by its answer form (src/door.ts). A binary operation answers its bytes, with the
 * metadata as headers (none for a plain one, the trace), unless `json` asks for the JSON form.
 */
export function operationBody(operation: AnyOperation, outcome: OperationOutcome<unknown>, json = false): unknown {
  const form = answerForm(operation);
  if (!operation.binary || json) return form.toRest(operation, outcome);
  const meta = form.carriesMeta ? outcomeMeta(outcome) : undefined;
  const { bytes, mediaType, info } = outcome.result as BinaryResult;
  const headers: Record<string, string> = meta ? { 'x-action-id': meta.actionId } : {};
  for (const [field, header] of Object.entries(operation.binary.headers ?? {})) {
    const value = (info as Record<string, unknown>)[field];
    // A field the answer leaves out (a screenshot's `annotated` when not asked) sends no header.
    if (value !== undefined) headers[header as string] = String(value);
  }
  if (meta?.pageEvents.length) headers['x-page-events'] = asciiJson(meta.pageEvents);
  if (meta?.usage) headers['x-usage'] = asciiJson(meta.usage);
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
