import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { ServerResponse } from 'node:http';
import { ServiceError } from '../core/errors.js';
import { errorBody } from './errors.js';
import { watchPeer } from './peer-liveness.js';
import { FORWARDED_HEADER, type Peer } from './peers.js';

/** A peer that does not accept the connection within this long is down. */
export const CONNECT_TIMEOUT_MS = 2_000;
/** Routes that answer at once (session info, end, list, health) must send their headers within this long. */
export const QUICK_HEADERS_TIMEOUT_MS = 10_000;
const MAX_JSON_BYTES = 64 * 1024 * 1024;

/** The caller's credentials, passed to the peer exactly as received so the peer checks them itself. */
const CREDENTIAL_HEADERS = ['x-svc-api-key', 'authorization', 'x-svc-project-id'];
/** Besides credentials, only what the route itself reads. Cookies, Host, Origin and the rest stay here. */
const REQUEST_HEADERS = [
  ...CREDENTIAL_HEADERS,
  'content-type',
  'content-length',
  'accept',
  'x-stream-response',
  // Streamable HTTP at /mcp: the MCP session, its protocol version and stream resumption.
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
];
const RESPONSE_HEADERS = [
  'content-type',
  'content-length',
  'cache-control',
  'x-accel-buffering',
  'www-authenticate',
  'allow',
  'mcp-session-id',
];

// Keep-alive sockets between instances: a forwarded call then costs one loopback/LAN round trip, not a handshake.
const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 256 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256 }) };

export interface PeerCall {
  peer: Peer;
  /** This instance's id, sent in the forwarded-by header. */
  self: string;
  method: string;
  /** Path and query, e.g. /v1/sessions/b.xyz/navigate */
  path: string;
  /** Headers of the caller's request; only credentials and content headers are passed on. */
  headers: IncomingHttpHeaders;
  /** A stream is piped (the caller's request); a string is sent as JSON. */
  body?: NodeJS.ReadableStream | string;
  signal?: AbortSignal;
  /** Bound on the wait for the peer's response headers; unset for operations that may run for minutes. */
  headersTimeoutMs?: number;
}

export function credentialHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return pick(headers, CREDENTIAL_HEADERS);
}

/** Sends a request to a peer; resolves with its response once the headers arrive, or fails with session_unavailable. */
export function callPeer(call: PeerCall): Promise<IncomingMessage> {
  // Concatenated, never resolved: a path like //other.host/... must not pick the host (only configured peers are contacted).
  if (!call.path.startsWith('/')) throw new Error(`peer path must start with "/": ${call.path}`);
  const url = new URL(call.peer.url + call.path);
  if (url.origin !== new URL(call.peer.url).origin) throw new Error(`peer path leaves the peer: ${call.path}`);
  const headers: Record<string, string> = { ...pick(call.headers, REQUEST_HEADERS), [FORWARDED_HEADER]: call.self };
  if (typeof call.body === 'string') {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(call.body));
  }
  const https = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    let settled = false;
    let answer: IncomingMessage | undefined;
    const timers: NodeJS.Timeout[] = [];
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      unwatch();
      req.destroy();
      reject(unavailable(call.peer, why));
    };
    // Bounds the whole exchange, headers and body (a stream's events, a JSON body), whatever the operation's length.
    const unwatch = watchPeer(call.peer, (why) => (answer ? answer.destroy(unavailable(call.peer, why)) : fail(why)));
    const req: ClientRequest = (https ? httpsRequest : httpRequest)(url, {
      method: call.method,
      headers,
      agent: https ? agents.https : agents.http,
    });
    req.on('socket', (socket) => {
      // Small request and answer writes must not wait for the previous packet's ACK (Nagle).
      socket.setNoDelay(true);
      if (!socket.connecting) return;
      const timer = setTimeout(() => fail(`no connection within ${CONNECT_TIMEOUT_MS} ms`), CONNECT_TIMEOUT_MS);
      timers.push(timer);
      socket.once('connect', () => clearTimeout(timer));
    });
    if (call.headersTimeoutMs !== undefined) {
      const timeoutMs = call.headersTimeoutMs;
      timers.push(setTimeout(() => fail(`no answer within ${timeoutMs} ms`), timeoutMs));
    }
    req.on('response', (res) => {
      if (settled) return void res.destroy();
      settled = true;
      timers.forEach(clearTimeout);
      answer = res;
      res.once('close', unwatch);
      resolve(res);
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    if (call.signal) {
      if (call.signal.aborted) return fail('the caller went away');
      call.signal.addEventListener('abort', () => (settled ? req.destroy() : fail('the caller went away')), { once: true });
    }
    if (call.body === undefined || typeof call.body === 'string') req.end(call.body);
    else call.body.pipe(req);
  });
}

/**
 * Answers the caller's request with the peer's answer: status, content headers and body piped through unchanged,
 * Server-Sent Events included. A caller that goes away closes the peer's request, which cancels the operation there.
 */
export async function forwardRequest(req: IncomingMessage, res: ServerResponse, call: Omit<PeerCall, 'body' | 'signal'>): Promise<void> {
  const gone = new AbortController();
  res.on('close', () => !res.writableFinished && gone.abort());
  const upstream = await callPeer({ ...call, body: req, signal: gone.signal });
  res.writeHead(upstream.statusCode ?? 502, pick(upstream.headers, RESPONSE_HEADERS));
  const stream = String(upstream.headers['content-type'] ?? '').startsWith('text/event-stream');
  // A stream's headers go at once (its first event may be far off); a JSON answer's go with its body.
  if (stream) res.flushHeaders();
  await new Promise<void>((resolve) => {
    upstream.on('data', (chunk: Buffer) => res.write(chunk));
    upstream.on('end', () => {
      res.end();
      resolve();
    });
    upstream.on('error', () => resolve());
    upstream.on('close', () => {
      if (!upstream.complete) {
        // The peer died mid-answer: a stream still gets its one final error event; a JSON body cannot be mended.
        if (stream && !res.writableEnded)
          res.end(`event: error\ndata: ${JSON.stringify(errorBody(unavailable(call.peer, 'the connection closed mid-stream')))}\n\n`);
        else res.destroy();
      }
      resolve();
    });
  });
}

/** A peer's JSON answer, for calls this instance makes on the caller's behalf (listing, MCP tool calls). */
export async function peerJson(call: PeerCall): Promise<{ status: number; json: unknown }> {
  const res = await callPeer(call);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_JSON_BYTES) throw unavailable(call.peer, 'its answer is too large');
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    throw unavailable(call.peer, 'the connection closed mid-answer');
  }
  try {
    return { status: res.statusCode ?? 502, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    throw unavailable(call.peer, 'its answer is not JSON');
  }
}

function unavailable(peer: Peer, why: string): ServiceError {
  return new ServiceError(
    'session_unavailable',
    `The server instance "${peer.id}" that holds this session cannot be reached (${why}). Try again shortly, or start a new session.`,
  );
}

function pick(headers: IncomingHttpHeaders, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name];
    if (typeof value === 'string') out[name] = value;
  }
  return out;
}
