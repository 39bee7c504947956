import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { ServiceError, shuttingDownError, toServiceError } from '../core/errors.js';
import type { BrowserService } from '../core/service.js';
import { parseInput } from '../core/validation.js';
import { LOCAL_OWNER } from '../door.js';
import { ApiKeys, HttpAuth } from './auth.js';
import { readJsonBody } from './body.js';
import { sendError, sendJson, toHttpError } from './errors.js';
import { BinaryBody } from './envelope.js';
import { forwardRequest, QUICK_HEADERS_TIMEOUT_MS } from './forward.js';
import { allowedHostNames, checkHost, isLoopbackBind } from './hosts.js';
import { nonCanonicalPath, requestTarget } from './target.js';
import { McpEndpoint } from './mcp.js';
import { AccessTokens, isTokenRefused, type OAuthConfig } from './oauth.js';
import { MCP_SESSION_DEFAULTS, type McpSessionLimits } from './mcp-limits.js';
import { listOnPeers } from './peer-sessions.js';
import { FORWARDED_HEADER, type Peers } from './peers.js';
import type { RouteCall } from './route.js';
import { matchRoute, type RouteMatch } from './routes.js';
import { disconnectSignal, streamOperation, wantsStream } from './sse.js';
import { isLivePath, LiveViewDoor } from '../live/server.js';

/**
 * An idle keep-alive connection that the server closes just as a client sends its next request on it fails that
 * request ("other side closed"). So the server keeps idle connections for 65 s but tells clients 5 s: a client that
 * honours the hint (undici/fetch drops the socket a second early) or keeps its own shorter limit closes first.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
const ADVERTISED_KEEP_ALIVE_S = 5;

export interface HttpOptions {
  port: number;
  host: string;
  apiKeys: string[];
  /** Access tokens from this authorization server are accepted beside the keys (docs/http.md#oauth). */
  oauth?: OAuthConfig;
  /** The origin clients reach the server at, e.g. behind a proxy: the OAuth resource is its /mcp. */
  publicUrl?: string;
  allowedHosts: string[];
  /** This instance and its peers: calls for a peer's session are forwarded there. */
  peers?: Peers;
  /** Bounds and idle timeout of the MCP sessions at /mcp; each defaults to MCP_SESSION_DEFAULTS. */
  mcpSessions?: Partial<McpSessionLimits>;
}

export interface HttpServer {
  /** e.g. http://127.0.0.1:8931 */
  url: string;
  port: number;
  server: Server;
  /** Open MCP sessions at /mcp. */
  mcpSessionCount(): number;
  /** Stops listening and closes every open connection and MCP session; the BrowserService stays up. */
  close(): Promise<void>;
  /**
   * Graceful stop: refuses new work (503), stops the operations in flight so each answers a `browser_unavailable`
   * error body, waits up to `graceMs` for those answers to go out, then closes like `close()`.
   */
  shutdown(graceMs?: number): Promise<void>;
}

const MCP_METHODS = ['GET', 'POST', 'DELETE'];
/** How long a shutdown waits for the stopped operations' answers to be written. */
const SHUTDOWN_GRACE_MS = 5_000;
/** Retry-After of a refused session start: nothing was started, and a slot frees whenever a session ends. */
const SESSION_LIMIT_RETRY_AFTER_S = 2;

/** Serves MCP at /mcp and the REST API at /v1 on one HTTP server; resolves once it listens. */
export async function serveHttp(service: BrowserService, options: HttpOptions): Promise<HttpServer> {
  if (options.peers && options.peers.self !== service.config.instanceId)
    throw new Error(
      `The peer table is for instance "${options.peers.self}" but the sessions are tagged "${service.config.instanceId ?? ''}".`,
    );
  const logger = service.logger;
  // With profiles kept, an owner scope (a key's, a token subject's) stays the same after a restart and across instances.
  const ownerSecret = (await service.profiles.ownerSecret()) ?? randomBytes(32);
  const tokens = options.oauth
    ? new AccessTokens(options.oauth, {
        secret: ownerSecret,
        publicUrl: options.publicUrl,
        host: options.host,
        timeoutMs: service.egress.connectTimeoutMs,
        logger,
      })
    : undefined;
  const auth = new HttpAuth(new ApiKeys(options.apiKeys, ownerSecret), tokens);
  // Remote callers must not reach this machine's network through the browser or the server (docs/egress.md).
  service.egress.preferPolicy(auth.enabled || !isLoopbackBind(options.host) ? 'public' : 'all');
  // Remote browser hosts cannot reach the per-session proxy on this machine's loopback: refuse before listening.
  service.egress.checkBrowserReach();
  const allowedHosts = allowedHostNames({ host: options.host, allowedHosts: options.allowedHosts, keysConfigured: auth.enabled });
  const stopping = new AbortController();
  const peers = options.peers;
  const mcp = new McpEndpoint(
    service,
    { ...MCP_SESSION_DEFAULTS, ...definedOnly(options.mcpSessions ?? {}) },
    { stopping: stopping.signal, peers },
  );
  /** Requests whose answer is still to come, but not the long-lived MCP event streams (GET), which never end by themselves. */
  let inflight = 0;
  let drained: (() => void) | undefined;
  const live = new LiveViewDoor(service);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const { pathname, search, canonical } = requestTarget(req.url);
    // What a forwarded request asks the peer: the parsed path and query only, whatever the raw request line said.
    const forwardPath = pathname + search;
    const headers: Record<string, string> = {};
    res.setHeader('keep-alive', `timeout=${ADVERTISED_KEEP_ALIVE_S}`);
    const counted = !(pathname === '/mcp' && method === 'GET');
    if (counted) inflight++;
    try {
      if (stopping.signal.aborted) {
        headers.connection = 'close';
        throw shuttingDownError();
      }
      checkHost(req, allowedHosts);
      if (!canonical) throw nonCanonicalPath(method, req.url);
      // The live-view page authenticates by its link's token, not by API key (docs/live-view.md).
      if (isLivePath(pathname)) return live.handleRequest(req, res);
      if (tokens?.isMetadataPath(pathname)) {
        if (method !== 'GET') throw methodNotAllowed(headers, ['GET']);
        return sendJson(res, 200, tokens.metadata());
      }
      if (pathname === '/mcp') {
        if (!MCP_METHODS.includes(method)) throw methodNotAllowed(headers, MCP_METHODS);
        const owner = await auth.authenticate(req, { bearer: true });
        const mcpSession = req.headers[FORWARDED_HEADER] === undefined ? req.headers['mcp-session-id'] : undefined;
        const home = peers && typeof mcpSession === 'string' ? peers.route(mcpSession) : undefined;
        if (peers && home?.kind === 'peer') {
          await forwardRequest(req, res, { peer: home.peer, self: peers.self, method, path: forwardPath, headers: req.headers });
          return;
        }
        await mcp.handle(req, res, owner);
        return;
      }
      const { match, allowed } = matchRoute(method, pathname);
      if (!match) {
        if (allowed.length) throw methodNotAllowed(headers, allowed);
        throw new ServiceError('not_found', `No route ${method} ${pathname}. The API is described at /v1/openapi.json.`);
      }
      // The key is checked here first: a caller this instance refuses never reaches a peer.
      const owner = match.route.auth ? await auth.authenticate(req, { bearer: false }) : LOCAL_OWNER;
      const forwarded = req.headers[FORWARDED_HEADER] !== undefined;
      const target = peers && !forwarded && match.params.id !== undefined ? peers.route(match.params.id) : undefined;
      if (peers && target?.kind === 'peer') {
        const call = { peer: target.peer, self: peers.self, method, path: forwardPath, headers: req.headers };
        await forwardRequest(req, res, { ...call, headersTimeoutMs: match.route.streams ? undefined : QUICK_HEADERS_TIMEOUT_MS });
        return;
      }
      const everywhere = peers && !forwarded && new URLSearchParams(search).get('local') !== 'true';
      const peerList = everywhere
        ? (path: string, field: string, signal: AbortSignal) => listOnPeers({ peers, path, field, headers: req.headers, signal })
        : undefined;
      await runRoute({ service, match, owner, peerList, query: search, req, res, stopping: stopping.signal });
    } catch (err) {
      const error = stoppedByShutdown(toHttpError(err, logger, { method, path: pathname }), stopping.signal);
      if (error.code === 'payload_too_large') headers.connection = 'close';
      // Retry-After says the call did nothing and may be sent again (the Python client retries only such answers).
      if (error.code === 'session_limit') headers['retry-after'] = String(SESSION_LIMIT_RETRY_AFTER_S);
      const challenge =
        error.code === 'unauthorized' || isTokenRefused(error) ? auth.challenge(error, { mcp: pathname === '/mcp' }) : undefined;
      if (challenge) headers['www-authenticate'] = challenge;
      sendError(res, error, headers);
    } finally {
      logger.debug({ method, path: pathname, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'http request');
      if (counted) onAnswered(res, () => --inflight === 0 && drained?.());
    }
  };

  const server = createServer((req, res) => void handle(req, res));
  server.on('upgrade', (req, socket, head) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (stopping.signal.aborted || !isLivePath(pathname)) throw new ServiceError('not_found', 'No WebSocket here.');
      checkHost(req, allowedHosts);
    } catch (err) {
      const error = toServiceError(err);
      socket.end(`HTTP/1.1 ${error.status} ${error.code}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    live.handleUpgrade(req, socket, head);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  service.live.serveAt(async () => url);
  tokens?.serveAt(url);
  logger.info(
    {
      url,
      mcp: `${url}/mcp`,
      rest: `${url}/v1`,
      auth: auth.scheme,
      ...(tokens ? { resource: tokens.resource, resourceMetadata: tokens.metadataUrl } : {}),
      egress: service.egress.policy.name,
    },
    'HTTP server listening',
  );
  if (!auth.enabled) {
    logger.warn(
      isLoopbackBind(options.host)
        ? 'No API key configured: any process on this machine can drive the browser through this server. Pass --api-key KEY (or SVC_API_KEYS) to require one.'
        : `No API key configured and listening on ${options.host}: anyone who can reach the port with an allowed Host can drive the browser. Pass --api-key KEY.`,
    );
  }

  const close = async () => {
    live.close();
    await mcp.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  return {
    url,
    port,
    server,
    mcpSessionCount: () => mcp.size,
    close,
    shutdown: async (graceMs = SHUTDOWN_GRACE_MS) => {
      if (!stopping.signal.aborted) {
        logger.info({ inflight }, 'HTTP server stopping: refusing new work, stopping operations in flight');
        server.close();
        const answered = new Promise<void>((resolve) => (drained = resolve));
        stopping.abort(shuttingDownError());
        if (inflight > 0) await Promise.race([answered, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      }
      await close();
    },
  };
}

/** Calls `done` once the response has been written out or its connection is gone. */
function onAnswered(res: ServerResponse, done: () => void): void {
  if (res.writableFinished || res.destroyed) return done();
  res.once('close', done);
}

/** An operation cancelled by the shutdown, not by its client, says the server is shutting down. */
function stoppedByShutdown(error: ServiceError, stopping: AbortSignal): ServiceError {
  return error.code === 'cancelled' && stopping.aborted ? shuttingDownError() : error;
}

interface RouteRun {
  service: BrowserService;
  match: RouteMatch;
  owner: string;
  req: IncomingMessage;
  res: ServerResponse;
  /** Fires at shutdown: the operation stops and answers `browser_unavailable`. */
  stopping: AbortSignal;
  /** Lists the caller's items on the peers, for lists that span the instances (GET /v1/sessions). */
  peerList?: RouteCall<unknown>['peerList'];
  /** The query string: a GET operation's input. */
  query: string;
}

/** Validates the body, then answers JSON, or SSE when the route streams and the caller asked for it. */
async function runRoute({ service, match: { route, params }, owner, peerList, query, req, res, stopping }: RouteRun): Promise<void> {
  const get = route.method === 'GET';
  const raw = route.body ? (get ? queryInput(route.body, query) : await readJsonBody(req, route.bodyLimit)) : undefined;
  const body: unknown = route.body ? parseInput(route.body, raw ?? {}, `${get ? 'query' : 'body'} for ${route.operationId}`) : undefined;
  const accept = typeof req.headers.accept === 'string' ? req.headers.accept : undefined;
  if (route.streams && wantsStream(req, raw)) {
    // Unknown sessions are answered 404 before the stream opens; once it is open, errors arrive as `error` events.
    const info = params.id !== undefined ? service.getSession(owner, params.id) : undefined;
    await streamOperation(
      res,
      {
        operation: route.operationId,
        sessionId: info?.id,
        url: info?.url,
        run: async (ctx) => {
          try {
            return await route.handle({ service, owner, params, body, accept, ctx: { ...ctx, signal: anySignal(ctx.signal, stopping) } });
          } catch (err) {
            throw stoppedByShutdown(toServiceError(err), stopping);
          }
        },
      },
      service.logger,
    );
    return;
  }
  const result = await route.handle({
    service,
    owner,
    params,
    body,
    ctx: { signal: anySignal(disconnectSignal(res), stopping) },
    accept,
    peerList,
  });
  if (result instanceof BinaryBody) sendBinary(res, result);
  else sendJson(res, 200, result);
}

/** A GET operation's input from its query string: the fields its schema names (JSON values parsed), others ignored. */
function queryInput(schema: z.ZodType, query: string): Record<string, unknown> {
  const fields = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  const input: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(query)) {
    if (!fields.includes(key)) continue;
    try {
      input[key] = JSON.parse(value);
    } catch {
      input[key] = value;
    }
  }
  return input;
}

function anySignal(signal: AbortSignal | undefined, stopping: AbortSignal): AbortSignal {
  return signal ? AbortSignal.any([signal, stopping]) : stopping;
}

function definedOnly<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function methodNotAllowed(headers: Record<string, string>, allowed: string[]): ServiceError {
  headers.allow = allowed.join(', ');
  return new ServiceError('method_not_allowed', `Method not allowed here; use ${allowed.join(' or ')}.`);
}

function sendBinary(res: ServerResponse, { contentType, body, headers }: BinaryBody): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': body.length, 'cache-control': 'no-store', ...headers });
  res.end(body);
}
