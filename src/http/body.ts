import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../core/errors.js';

/** Largest request body accepted on any route. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the body as JSON; an empty body reads as `undefined`. Refuses non-JSON content types, bodies over the limit and malformed JSON. */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limit) throw tooLarge(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  // A JSON content type is required so a web page cannot post here with a CORS-free "simple" request.
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ServiceError(
      'unsupported_media_type',
      `The body must be JSON with Content-Type: application/json (got "${type || 'none'}").`,
    );
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError('invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

function tooLarge(limit: number): ServiceError {
  return new ServiceError('payload_too_large', `The body is larger than the limit of ${limit} bytes.`);
}
