import { ERROR_STATUS, ServiceError, type ErrorCode } from '../core/errors.js';
import type { RemoteAnswer, RemoteCall } from '../core/operations/index.js';
import { answerForm } from '../door.js';
import { credentialHeaders, peerJson, QUICK_HEADERS_TIMEOUT_MS } from './forward.js';
import { listOnPeers } from './peer-sessions.js';
import type { Peer, Peers } from './peers.js';

/**
 * MCP calls for a peer's session, for every operation of the table: this instance calls the peer's REST route for
 * the same operation with the caller's own key (JSON answers, bytes as base64) and hands the outcome back to the MCP
 * door, which renders it as it renders a local one. What needs the MCP connection itself stays local to it: the
 * peer cannot ask this client for sampling, and progress notifications are not relayed.
 */
export function remoteOperations(peers: Peers): (call: RemoteCall) => Promise<RemoteAnswer> | undefined {
  return (call) => {
    if (call.operation.spansPeers && call.sessionId === undefined) return listEverywhere(peers, call, call.operation.spansPeers);
    if (call.sessionId === undefined) return undefined;
    const target = peers.route(call.sessionId);
    if (target.kind !== 'peer') return undefined;
    return forward(peers, target.peer, call);
  };
}

async function forward(peers: Peers, peer: Peer, call: RemoteCall): Promise<RemoteAnswer> {
  const { operation, input } = call;
  const path = operation.rest.path.replace('{id}', encodeURIComponent(call.sessionId!));
  const get = operation.rest.method === 'GET';
  const query = get ? queryString(input) : '';
  const { status, json } = await peerJson({
    peer,
    self: peers.self,
    method: operation.rest.method,
    path: path + query,
    headers: { ...restCredentials(call.headers ?? {}), accept: 'application/json' },
    body: get ? undefined : JSON.stringify(input),
    signal: call.signal,
    headersTimeoutMs: operation.streams ? undefined : QUICK_HEADERS_TIMEOUT_MS,
  });
  if (status !== 200) throw peerError(json);
  return answerForm(operation).fromRest(operation, json);
}

/** A list spanning instances (session_list) over MCP, like its REST route; peers that did not answer are named. */
async function listEverywhere(peers: Peers, call: RemoteCall, field: string): Promise<RemoteAnswer> {
  const [local, remote] = await Promise.all([
    call.local(),
    listOnPeers({ peers, path: call.operation.rest.path, field, headers: restCredentials(call.headers ?? {}), signal: call.signal }),
  ]);
  const result = local.result as Record<string, unknown[]>;
  const outcome = { ...local, result: { ...result, [field]: [...(result[field] ?? []), ...remote.items] } };
  return { outcome, ...(remote.unavailable.length ? { unavailable: remote.unavailable } : {}) };
}

function queryString(input: Record<string, unknown>): string {
  const entries = Object.entries(input).filter(([, value]) => value !== undefined);
  if (!entries.length) return '';
  return `?${new URLSearchParams(entries.map(([key, value]) => [key, typeof value === 'string' ? value : JSON.stringify(value)])).toString()}`;
}

/** /mcp takes the key as a Bearer token too; the peer's REST routes read it from x-svc-api-key. Same key either way. */
function restCredentials(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const credentials = credentialHeaders(headers);
  const bearer = /^Bearer\s+(.+)$/i.exec(credentials.authorization ?? '')?.[1]?.trim();
  if (credentials['x-svc-api-key'] === undefined && bearer) credentials['x-svc-api-key'] = bearer;
  delete credentials.authorization;
  return credentials;
}

/** The peer's REST error body as the same ServiceError; an answer that is not one is the peer failing. */
function peerError(json: unknown): ServiceError {
  const error = (json as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
  if (error?.code && error.code in ERROR_STATUS && typeof error.message === 'string')
    return new ServiceError(error.code as ErrorCode, error.message, error.details === undefined ? undefined : { details: error.details });
  return new ServiceError('internal', 'Another server instance answered this call with an unexpected body.');
}
