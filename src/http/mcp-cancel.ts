import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCNotification, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** The first protocol version whose SSE streams start with an event id, so a dropped one can be resumed. */
const RESUMABLE_SINCE = '2025-11-25';

export interface DropWatch {
  req: IncomingMessage;
  res: ServerResponse;
  body: unknown;
  transport: StreamableHTTPServerTransport;
  /** How long a client that can resume has to reconnect (with Last-Event-ID) before its calls are cancelled. */
  graceMs: number;
  /** When the client last reconnected to one of this MCP session's streams with Last-Event-ID (0: never). */
  lastResumeAt: () => number;
}

/**
 * A client that drops the connection of a POST whose calls are still running gets them cancelled, as a REST client that
 * disconnects does: the server is fed `notifications/cancelled` for each, the same path a client's own cancel takes.
 * A client that can resume the stream is given `graceMs` to reconnect first; one that does keeps its calls.
 */
export function cancelOnDrop({ req, res, body, transport, graceMs, lastResumeAt }: DropWatch): void {
  const ids = requestIds(body);
  if (!ids.length) return;
  res.once('close', () => {
    if (res.writableFinished) return;
    const droppedAt = Date.now();
    const version = String(req.headers['mcp-protocol-version'] ?? '');
    const cancel = () => {
      if (lastResumeAt() >= droppedAt) return;
      for (const requestId of ids) transport.onmessage?.(cancelled(requestId));
    };
    if (version < RESUMABLE_SINCE) cancel();
    else setTimeout(cancel, graceMs).unref();
  });
}

function cancelled(requestId: RequestId): JSONRPCNotification {
  return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'The client disconnected.' } };
}

/** The ids of the JSON-RPC requests (not notifications or responses) in a POST body, single or batch. */
function requestIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? body : [body];
  const ids: RequestId[] = [];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { method, id } = message as { method?: unknown; id?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}
