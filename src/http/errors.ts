import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ERROR_STATUS, ServiceError, toServiceError, type ErrorCode } from '../core/errors.js';

/** The one error body of the REST surface: `{success: false, error: {code, message}}`. */
export const ErrorBody = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.unknown().optional().describe('For invalid_argument: the zod issues, each with its path.'),
    }),
  })
  .describe('Every error, whatever the route.');
export type ErrorBody = z.infer<typeof ErrorBody>;

export function errorBody(error: ServiceError): ErrorBody {
  return { success: false, error: error.toJSON() };
}

/** Maps anything thrown to a ServiceError, logging the details of unexpected failures (never the request headers). */
export function toHttpError(err: unknown, logger: Logger, context: Record<string, unknown>): ServiceError {
  const error = toServiceError(err);
  if (error.code === 'internal') logger.error({ err, ...context }, 'request failed');
  return error;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: ServiceError, headers: Record<string, string> = {}): void {
  sendJson(res, error.status, errorBody(error), headers);
}
