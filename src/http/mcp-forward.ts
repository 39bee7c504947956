import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ERROR_STATUS, ServiceError, toServiceError, type ErrorCode } from '../core/errors.js';
import type { SessionInfo } from '../core/sessions.js';
import { errorResult, toCallToolResult } from '../mcp/result.js';
import type { RemoteToolCall, RemoteTools, ToolOutput } from '../mcp/tool.js';
import { agentSummary } from '../mcp/tools/agent-execute.js';
import { extractionText } from '../mcp/tools/extract.js';
import { credentialHeaders, peerJson, QUICK_HEADERS_TIMEOUT_MS } from './forward.js';
import { listPeerSessions } from './peer-sessions.js';
import type { Peer, Peers } from './peers.js';

interface OperationData {
  result: unknown;
  actionId: string;
  usage?: unknown;
}

/** Each session tool's REST route on the peer, and how the route's `data` becomes the tool's own result. */
interface ForwardedOperation {
  route: string;
  quick?: boolean;
  shape(data: OperationData): ToolOutput<unknown>;
}

const OPERATIONS: Record<string, ForwardedOperation> = {
  navigate: {
    route: 'navigate',
    shape: ({ result, actionId }) => ({ structured: { success: true, data: { result, actionId } }, meta: { actionId } }),
  },
  extract: {
    route: 'extract',
    shape: ({ result, actionId, usage }) => ({
      structured: result,
      text: extractionText(result as Record<string, unknown>),
      meta: { actionId, ...(usage ? { usage } : {}) },
    }),
  },
  agent_execute: {
    route: 'agentExecute',
    shape: ({ result, actionId }) => ({ structured: result, text: agentSummary(result as never), meta: { actionId } }),
  },
  session_end: { route: 'end', quick: true, shape: () => ({ structured: { success: true } }) },
};

/** The profiles tool's session actions (its list and delete need no session and run here). */
const PROFILE_ACTIONS: Record<string, ForwardedOperation & { body(args: Record<string, unknown>): Record<string, unknown> }> = {
  save: {
    route: 'saveProfile',
    quick: true,
    body: ({ name }) => (name === undefined ? {} : { name }),
    shape: ({ result, actionId }) => ({ structured: { saved: result }, meta: { actionId } }),
  },
  state: {
    route: 'state',
    quick: true,
    body: ({ indexedDB }) => (indexedDB === undefined ? {} : { indexedDB }),
    shape: ({ result, actionId }) => ({ structured: { state: result }, meta: { actionId } }),
  },
};

/**
 * MCP tool calls for a peer's session: this instance calls the peer's REST route for the same operation with the
 * caller's own key and shapes the tool result here. What needs the MCP connection itself stays local to it: the
 * peer cannot ask this client for sampling, and progress notifications are not relayed.
 */
export function remoteTools(peers: Peers): RemoteTools {
  return (call) => {
    if (call.tool === 'session_list') return listEverywhere(peers, call);
    const action = call.tool === 'profiles' ? PROFILE_ACTIONS[String(call.args.action)] : undefined;
    const operation = action ?? OPERATIONS[call.tool];
    const sessionId = call.args.sessionId;
    if (!operation || typeof sessionId !== 'string') return undefined;
    const target = peers.route(sessionId);
    if (target.kind !== 'peer') return undefined;
    const forwarded = action ? { ...call, args: { sessionId, ...action.body(call.args) } } : call;
    return forwardTool(peers, target.peer, forwarded, operation).catch((err) => errorResult(toServiceError(err)));
  };
}

async function forwardTool(peers: Peers, peer: Peer, call: RemoteToolCall, operation: ForwardedOperation): Promise<CallToolResult> {
  const { sessionId, streamResponse: _stream, ...body } = call.args;
  const { status, json } = await peerJson({
    peer,
    self: peers.self,
    method: 'POST',
    path: `/v1/sessions/${encodeURIComponent(String(sessionId))}/${operation.route}`,
    headers: restCredentials(call.headers ?? {}),
    body: JSON.stringify(body),
    signal: call.signal,
    headersTimeoutMs: operation.quick ? QUICK_HEADERS_TIMEOUT_MS : undefined,
  });
  if (status !== 200) return errorResult(peerError(json));
  return toCallToolResult(operation.shape((json as { data: OperationData }).data ?? { result: undefined, actionId: '' }));
}

/** session_list over MCP spans instances like GET /v1/sessions; peers that did not answer are named in _meta.unavailable. */
async function listEverywhere(peers: Peers, call: RemoteToolCall): Promise<CallToolResult> {
  const [local, remote] = await Promise.all([call.local(), listPeerSessions(peers, restCredentials(call.headers ?? {}), call.signal)]);
  if (local.isError) return local;
  const sessions = [...((local.structuredContent as { sessions: SessionInfo[] }).sessions ?? []), ...remote.sessions];
  const result = toCallToolResult({ structured: { sessions } });
  return remote.unavailable.length
    ? {
        ...result,
        content: [
          ...result.content,
          { type: 'text', text: `Note: instances not reachable, their sessions are missing: ${remote.unavailable.join(', ')}` },
        ],
        _meta: { ...result._meta, unavailable: remote.unavailable },
      }
    : result;
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
