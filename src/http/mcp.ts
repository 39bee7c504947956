import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { toServiceError } from '../core/errors.js';
import type { BrowserService } from '../core/service.js';
import { claimsRevision, createMcpServer, TaskBook } from '../mcp/server.js';
import { readJsonBody } from './body.js';
import { cancelOnDrop } from './mcp-cancel.js';
import { MemoryEventStore } from './event-store.js';
import { remoteOperations } from './mcp-forward.js';
import type { Peers } from './peers.js';
import type { McpSessionLimits } from './mcp-limits.js';

interface McpSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  owner: string;
  lastSeen: number;
  inflight: number;
  /** When the client last reconnected to a stream with Last-Event-ID. */
  lastResumeAt: number;
}

const RETRY_MS = 1_000;
/** What a refused initialize is told to wait: sessions free up as clients end them or go idle. */
const RETRY_AFTER_S = 10;
/** A resumable client whose POST stream dropped has this long to reconnect before its calls are cancelled. */
const RESUME_GRACE_MS = 3 * RETRY_MS;

/** JSON-RPC error codes the /mcp endpoint answers with before a request reaches the MCP server. */
const RPC = { parseError: -32700, invalidRequest: -32600, sessionNotFound: -32001, sessionLimit: -32002 } as const;

/**
 * MCP streamable HTTP at /mcp, in both revisions a client may speak:
 * - 2025-11-25 and earlier, stateful: `initialize` creates an MCP session (its id in Mcp-Session-Id) with its own MCP
 *   server (SDK 1.x) bound to the caller's owner scope; later requests must carry that id and the same key.
 * - 2026-07-28, stateless: each request carries its revision in `_meta` and is answered by a fresh SDK 2.x server
 *   (mcp/modern.ts) for the caller's owner scope; a call that waits on the client continues in a round (mcp/rounds.ts).
 */
export class McpEndpoint {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  /** Initializes under way, per owner: they count against the bounds before their session exists. */
  private readonly pending = new Map<string, number>();
  private readonly stopping?: AbortSignal;
  private readonly peers?: Peers;
  /** Tool calls run as tasks, under either revision: a key finds its tasks from any MCP session or request. */
  private readonly tasks = new TaskBook();
  /** The 2026-07-28 side, loaded with the SDK 2.x on the first request that may be one (modernSide). */
  private modern?: Promise<ModernSide>;

  constructor(
    private readonly service: BrowserService,
    private readonly limits: McpSessionLimits,
    /** stopping fires at shutdown (running tool calls stop and answer an error); peers get calls for their sessions. */
    options: { stopping?: AbortSignal; peers?: Peers } = {},
  ) {
    this.stopping = options.stopping;
    this.peers = options.peers;
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1_000, Math.min(60_000, limits.idleTimeoutMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(req: IncomingMessage, res: ServerResponse, owner: string): Promise<void> {
    const id = header(req, 'mcp-session-id');
    let body: unknown;
    if (req.method === 'POST') {
      try {
        body = await readJsonBody(req);
      } catch (err) {
        const error = toServiceError(err);
        return rpcError(res, error.status, error.code === 'invalid_json' ? RPC.parseError : RPC.invalidRequest, error.message);
      }
      if (body === undefined) return rpcError(res, 400, RPC.parseError, 'Parse error: the body is empty.');
    }
    if (id === undefined) {
      if (req.method === 'POST' && isInitializeRequest(body)) return this.initialize(req, res, owner, body);
      if (req.method === 'POST' && claimsModern(req, body)) {
        const modern = await this.modernSide();
        if (!(await modern.isLegacy(req, body))) return modern.serve(req, res, owner, body);
      }
      return rpcError(res, 400, RPC.invalidRequest, 'Bad Request: no Mcp-Session-Id header; send initialize first to open a session.');
    }
    const session = this.sessions.get(id);
    // Another key's MCP session is reported missing, like its browser sessions, so ids cannot be probed.
    if (!session || session.owner !== owner)
      return rpcError(res, 404, RPC.sessionNotFound, 'Session not found; initialize a new MCP session.');
    // A session with a request or stream open is in use however long it runs.
    session.inflight++;
    res.once('close', () => {
      session.inflight--;
      session.lastSeen = Date.now();
    });
    if (req.method === 'GET' && header(req, 'last-event-id') !== undefined) session.lastResumeAt = Date.now();
    if (req.method === 'POST')
      cancelOnDrop({ req, res, body, transport: session.transport, graceMs: RESUME_GRACE_MS, lastResumeAt: () => session.lastResumeAt });
    await session.transport.handleRequest(req, res, body);
  }

  /**
   * The SDK 2.x handler of 2026-07-28 requests, each answered by a fresh server for the caller's owner scope (passed
   * as the request's auth). Loaded on first use: a server (or test) that only sees 2025-11-25 clients never loads it.
   */
  private modernSide(): Promise<ModernSide> {
    this.modern ??= (async () => {
      const [{ createMcpHandler, isLegacyRequest }, { toNodeHandler, toWebRequest }, { ModernMcp }] = await Promise.all([
        import('@modelcontextprotocol/server'),
        import('@modelcontextprotocol/node'),
        import('../mcp/modern.js'),
      ]);
      const { service } = this;
      const remote = this.peers ? remoteOperations(this.peers) : undefined;
      const servers = new ModernMcp(service);
      const handler = createMcpHandler(
        ({ authInfo }) => servers.server({ owner: ownerOf(authInfo), stopping: this.stopping, remote, tasks: this.tasks }),
        { legacy: 'reject', onerror: (err) => service.logger.debug({ err }, 'MCP 2026-07-28 request refused') },
      );
      const node = toNodeHandler(handler, { onerror: (err) => service.logger.error({ err }, 'MCP 2026-07-28 request failed') });
      return {
        isLegacy: async (req, body) => isLegacyRequest(await toWebRequest(req, body), body),
        serve: async (req, res, owner, body) => {
          const auth: AuthInfo = { token: '', clientId: owner, scopes: [], extra: { owner } };
          await node(Object.assign(req, { auth }), res, body);
        },
        close: async () => {
          servers.close();
          await handler.close();
        },
      };
    })();
    return this.modern;
  }

  private async initialize(req: IncomingMessage, res: ServerResponse, owner: string, body: unknown): Promise<void> {
    const refusal = this.makeRoom(owner);
    if (refusal) return rpcError(res, 429, RPC.sessionLimit, refusal, { 'retry-after': String(RETRY_AFTER_S) });
    this.pending.set(owner, (this.pending.get(owner) ?? 0) + 1);
    try {
      await this.open(req, res, owner, body);
    } finally {
      const left = (this.pending.get(owner) ?? 1) - 1;
      if (left > 0) this.pending.set(owner, left);
      else this.pending.delete(owner);
    }
  }

  /**
   * At a bound, the least recently used idle MCP session is closed to make room: it holds no browser state, and its
   * client gets 404 and initializes again. Only the key's own for the per-key bound; for the overall bound, the key's
   * own or one of a key holding more than its share (the bound divided among the keys holding sessions), never one of a
   * key within its share. With none to close, the refusal (429, Retry-After).
   */
  private makeRoom(owner: string): string | undefined {
    const { maxSessions, maxSessionsPerKey } = this.limits;
    if (this.count(owner) >= maxSessionsPerKey && !this.evictIdle((session) => session.owner === owner))
      return `Too many MCP sessions for this API key (--max-mcp-sessions-per-key ${maxSessionsPerKey}), all in use. End one with DELETE /mcp and try again.`;
    if (this.count() >= maxSessions) {
      const counts = new Map<string, number>([[owner, 0]]);
      for (const session of this.sessions.values()) counts.set(session.owner, (counts.get(session.owner) ?? 0) + 1);
      const share = Math.floor(maxSessions / counts.size);
      if (!this.evictIdle((session) => session.owner === owner || counts.get(session.owner)! > share))
        return 'The server has no free MCP session slot right now (--max-mcp-sessions). Try again later.';
    }
    return undefined;
  }

  private count(owner?: string): number {
    let open = 0;
    for (const session of this.sessions.values()) if (owner === undefined || session.owner === owner) open++;
    if (owner !== undefined) return open + (this.pending.get(owner) ?? 0);
    for (const count of this.pending.values()) open += count;
    return open;
  }

  private evictIdle(may: (session: McpSession) => boolean): boolean {
    let oldest: [string, McpSession] | undefined;
    for (const entry of this.sessions)
      if (entry[1].inflight === 0 && may(entry[1]) && (!oldest || entry[1].lastSeen < oldest[1].lastSeen)) oldest = entry;
    if (!oldest) return false;
    this.sessions.delete(oldest[0]);
    this.service.logger.debug({ mcpSession: oldest[0], open: this.sessions.size }, 'idle MCP session closed to make room');
    void oldest[1].server.close().catch(() => undefined);
    return true;
  }

  private async open(req: IncomingMessage, res: ServerResponse, owner: string, body: unknown): Promise<void> {
    const server = createMcpServer(this.service, {
      tasks: this.tasks,
      owner,
      stopping: this.stopping,
      remote: this.peers ? remoteOperations(this.peers) : undefined,
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      // Tagged like browser session ids, so any instance behind a load balancer can send the MCP session's requests home.
      sessionIdGenerator: () => (this.peers ? `${this.peers.self}.` : '') + randomBytes(18).toString('base64url'),
      // Resumable streams: a client that loses an SSE stream reconnects with Last-Event-ID after this delay.
      eventStore: new MemoryEventStore(),
      retryInterval: RETRY_MS,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, owner, lastSeen: Date.now(), inflight: 0, lastResumeAt: 0 });
        this.service.logger.debug({ mcpSession: id, open: this.sessions.size }, 'MCP session opened');
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && this.sessions.delete(id)) this.service.logger.debug({ mcpSession: id, open: this.sessions.size }, 'MCP session closed');
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    // A failed initialize leaves no session behind.
    if (!transport.sessionId || !this.sessions.has(transport.sessionId)) await server.close();
  }

  /** MCP sessions nobody has used for the idle timeout are closed, like idle browser sessions. */
  private closeIdle(): void {
    const cutoff = Date.now() - this.limits.idleTimeoutMs;
    for (const session of this.sessions.values())
      if (session.inflight === 0 && session.lastSeen < cutoff) void session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.tasks.close();
    await (await this.modern)?.close();
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.server.close().catch(() => undefined)));
  }
}

interface ModernSide {
  /** The SDK's own routing: false for everything its 2026-07-28 path answers (errors of a malformed claim too). */
  isLegacy(req: IncomingMessage, body: unknown): Promise<boolean>;
  serve(req: IncomingMessage, res: ServerResponse, owner: string, body: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * Whether a POST without an MCP session may be of 2026-07-28, before loading the SDK that decides (isLegacy): its
 * `MCP-Protocol-Version` header or a message's `_meta` names a revision. Anything else is 2025-era traffic.
 */
function claimsModern(req: IncomingMessage, body: unknown): boolean {
  if (header(req, 'mcp-protocol-version') !== undefined) return true;
  return (Array.isArray(body) ? body : [body]).some(claimsRevision);
}

function ownerOf(authInfo: AuthInfo | undefined): string {
  const owner = authInfo?.extra?.owner;
  if (typeof owner !== 'string') throw new Error('An MCP 2026-07-28 request reached its server without an owner scope.');
  return owner;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers }).end(payload);
}
