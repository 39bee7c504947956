import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { EgressRefusedError, type EgressPolicy } from './policy.js';
import { upstreamAuthRefused, type UpstreamProxy } from './upstream.js';

/** Headers that belong to one hop (browser -> proxy or proxy -> server), never forwarded. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const RECENT_LIMIT = 32;
const REALM = 'Basic realm="browser-session-mcp egress"';
const AUTH_REQUIRED = `HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: ${REALM}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;

/** The credentials a browser context gives its proxy (Playwright's `proxy.username`/`password`). */
export interface ProxyCredentials {
  username: string;
  password: string;
}

export interface ProxyOptions {
  policy: EgressPolicy;
  connectTimeoutMs: number;
  logger: Logger;
  /** The session's upstream proxy: checked targets are reached through it (upstream.ts). */
  upstream?: UpstreamProxy;
}

/**
 * A forward proxy for one browser context: Chromium sends it every request (plain HTTP in absolute form, everything
 * else as CONNECT tunnels, WebSockets included); it resolves each host itself, checks the addresses against the policy
 * and connects to an address it checked. Refusals are kept (per host:port) so a failed navigation can say why.
 */
export class EgressProxy {
  /** Called for every refused connection. */
  onRefused: (refusal: EgressRefusedError) => void = () => undefined;
  private readonly recent = new Map<string, EgressRefusedError>();
  private readonly failures = new Map<string, { error: Error; at: number }>();
  private readonly sockets = new Set<Duplex>();
  private readonly agent = new Agent({ keepAlive: true, maxFreeSockets: 16 });

  /** Only its own browser context knows these: any other local process that connects is answered 407. */
  readonly credentials: ProxyCredentials = { username: 'session', password: randomBytes(24).toString('base64url') };
  private readonly expected = Buffer.from(
    `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString('base64')}`,
  );

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: ProxyOptions,
  ) {}

  static async start(options: ProxyOptions): Promise<EgressProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new EgressProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, options);
    server.on('connection', (socket: Socket) => proxy.track(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void proxy.forward(req, res));
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void proxy.tunnel(req, socket, head));
    // Chromium tunnels WebSockets with CONNECT; an Upgrade in absolute form is refused rather than half-handled.
    server.on('upgrade', (_req: IncomingMessage, socket: Duplex) => socket.destroy());
    server.on('clientError', (_err, socket: Duplex) => socket.destroy());
    return proxy;
  }

  /** Why the proxy could not connect to `host`:`port` (DNS, refused, timeout) since `since` (performance.now()), if it failed. */
  failureOf(host: string, port: number, since: number): Error | undefined {
    const failure = this.failures.get(`${host.toLowerCase()}:${port}`);
    return failure && failure.at >= since ? failure.error : undefined;
  }

  /** The refusal of a connection to `host`:`port` recorded since `since` (performance.now()), if any. */
  refusalOf(host: string, port: number, since: number): EgressRefusedError | undefined {
    const refusal = this.recent.get(`${host.toLowerCase()}:${port}`);
    return refusal && (refusal as RecentRefusal).at >= since ? refusal : undefined;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private authorized(req: IncomingMessage): boolean {
    const given = Buffer.from(req.headers['proxy-authorization'] ?? '');
    return given.length === this.expected.length && timingSafeEqual(given, this.expected);
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  private refuse(err: EgressRefusedError): void {
    (err as RecentRefusal).at = performance.now();
    const key = `${err.host.toLowerCase()}:${err.port}`;
    this.recent.delete(key);
    this.recent.set(key, err);
    if (this.recent.size > RECENT_LIMIT) this.recent.delete(this.recent.keys().next().value!);
    this.options.logger.debug({ host: err.host, port: err.port, reason: err.reason }, 'egress refused');
    this.onRefused(err);
  }

  private failed(host: string, port: number, err: unknown): void {
    if (err instanceof EgressRefusedError) return this.refuse(err);
    const key = `${host.toLowerCase()}:${port}`;
    this.failures.delete(key);
    this.failures.set(key, { error: err instanceof Error ? err : new Error(String(err)), at: performance.now() });
    if (this.failures.size > RECENT_LIMIT) this.failures.delete(this.failures.keys().next().value!);
  }

  /** Resolves and checks, then connects to the first checked address that answers within the connect timeout. */
  private async open(host: string, port: number): Promise<Socket> {
    const targets = await this.options.policy.resolve(host, port);
    const upstream = this.options.upstream?.carries(host) ? this.options.upstream : undefined;
    let lastError: unknown;
    for (const target of targets.slice(0, 2)) {
      try {
        if (upstream) return await upstream.tunnel(target.address, port);
        return await connectWithin({ host: target.address, port, family: target.family }, this.options.connectTimeoutMs);
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  }

  private async tunnel(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    this.track(socket);
    // The connection is detached from the HTTP parser here: the browser retries with credentials on a new one.
    if (!this.authorized(req)) return void socket.end(AUTH_REQUIRED);
    let target: URL;
    try {
      target = new URL(`http://${req.url ?? ''}`);
    } catch {
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const host = target.hostname;
    const port = Number(target.port || 443);
    let upstream: Socket;
    try {
      upstream = await this.open(host, port);
    } catch (err) {
      this.failed(host, port, err);
      socket.end(`HTTP/1.1 ${err instanceof EgressRefusedError ? '403 Forbidden' : '502 Bad Gateway'}\r\n\r\n`);
      return;
    }
    if (socket.destroyed) return void upstream.destroy();
    this.track(upstream);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
    const end = () => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.once('close', end);
    socket.once('close', end);
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': REALM, 'content-length': 0 }).end();
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const port = Number(target.port || 80);
    let targets: Array<{ address: string; family: 4 | 6 }>;
    try {
      targets = await this.options.policy.resolve(target.hostname, port);
    } catch (err) {
      this.failed(target.hostname, port, err);
      // No response at all: Chromium fails the request (net::ERR_EMPTY_RESPONSE) instead of showing a proxy page.
      req.socket.destroy();
      return;
    }
    const { address, family } = targets[0]!;
    const path = `${target.pathname}${target.search}`;
    const via = this.options.upstream?.carries(target.hostname) ? this.options.upstream.requestOptions({ address, port, path }) : undefined;
    const upstream = httpRequest({
      ...(via ?? { host: address, family, port, path }),
      method: req.method,
      headers: [
        ...forwardHeaders(req.rawHeaders),
        ...Object.entries(via?.headers ?? {})
          .flat()
          .map(String),
      ],
      setHost: false,
      agent: this.agent,
    });
    upstream.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), this.options.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('response', (answer) => {
      // The upstream refused the session's credentials: a failure of this hop, not a page for the browser to answer.
      if (via && answer.statusCode === 407) {
        answer.resume();
        this.failed(target.hostname, port, new Error(upstreamAuthRefused(this.options.upstream!.name)));
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardHeaders(answer.rawHeaders));
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (err) => {
      if (!res.headersSent) this.failed(target.hostname, port, err);
      if (res.headersSent) res.destroy();
      else req.socket.destroy();
    });
    // The browser gave up (closed the connection) before the answer was complete: stop fetching it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }
}

interface RecentRefusal extends EgressRefusedError {
  at: number;
}

function forwardHeaders(raw: string[]): string[] {
  const listed = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const name of raw[i + 1]!.split(',')) listed.add(name.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_HEADERS.has(name) && !listed.has(name)) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function connectWithin(target: { host: string; port: number; family: number }, ms: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(target);
    const timer = setTimeout(() => socket.destroy(new Error(`connect to ${target.host}:${target.port} timed out after ${ms} ms`)), ms);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', reject);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
