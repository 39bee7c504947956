import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ServiceError } from '../core/errors.js';
import type { OperationContext } from '../core/operation.js';
import { errorBody, toHttpError } from './errors.js';

/** Names of the events of a streamed operation, in the order they can occur. */
export const SSE_EVENTS = ['starting', 'connected', 'log', 'finished', 'error'] as const;
export type SseEventName = (typeof SSE_EVENTS)[number];

const KEEPALIVE_MS = 15_000;

/** True when the caller asked for SSE: header `x-stream-response: true` or body `streamResponse: true`. */
export function wantsStream(req: IncomingMessage, body: unknown): boolean {
  if (String(req.headers['x-stream-response'] ?? '').toLowerCase() === 'true') return true;
  return typeof body === 'object' && body !== null && (body as { streamResponse?: unknown }).streamResponse === true;
}

/** Aborts when the client goes away before the response is complete. */
export function disconnectSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new Error('The client disconnected.'));
  });
  return controller.signal;
}

export interface StreamedOperation {
  operation: string;
  /** The session, for operations on one. */
  sessionId?: string;
  /** URL of the session's page when the stream opened, sent with `connected`. */
  url?: string;
  /** Runs the operation; resolves to the body the non-streamed call would answer. */
  run(ctx: OperationContext): Promise<unknown>;
}

/**
 * Answers `text/event-stream`: `starting`, `connected`, zero or more `log`, then exactly one of `finished`
 * (the non-streamed body) or `error` (the error body). A client that disconnects aborts the operation.
 */
export async function streamOperation(res: ServerResponse, op: StreamedOperation, logger: Logger): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Reverse proxies (nginx) would otherwise buffer the whole stream.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const signal = disconnectSignal(res);
  const send = (event: SseEventName, data: unknown) => {
    if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const keepalive = setInterval(() => !res.writableEnded && res.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  try {
    send('starting', { operation: op.operation, sessionId: op.sessionId });
    send('connected', { sessionId: op.sessionId, url: op.url });
    const body = await op.run({ signal, progress: (event) => send('log', event) });
    send('finished', body);
  } catch (err) {
    const error: ServiceError = toHttpError(err, logger, { route: op.operation, session: op.sessionId });
    if (signal.aborted)
      logger.info({ session: op.sessionId, operation: op.operation, code: error.code }, 'client disconnected during a streamed operation');
    send('error', errorBody(error));
  } finally {
    clearInterval(keepalive);
    res.end();
  }
}
