import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { toServiceError, type ServiceError } from '../core/errors.js';
import { LiveInput, type LiveCloseReason, type LiveMessage, type LiveViewer } from '../core/live/index.js';
import type { BrowserService } from '../core/service.js';
import { liveViewPage } from './page.js';

const LIVE_PATH = /^\/live\/([^/]+)(\/ws)?\/?$/;
/** A viewer's messages are small (a key, a pointer position, a paste); anything larger closes the connection. */
const MAX_MESSAGE_BYTES = 64 * 1024;
const CLOSE_CODES: Record<LiveCloseReason, number> = { ended: 4000, expired: 4001, shutdown: 4002 };
/**
 * A viewer whose unsent data passes this is dropped: it stopped reading. Frames and status wait for it in single slots,
 * so only answers (copies, each at most MAX_COPIED_CHARS) can pile up to this.
 */
export const MAX_VIEWER_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Whether a path belongs to the live view: the page `/live/{id}` and its socket `/live/{id}/ws`. */
export function isLivePath(pathname: string): boolean {
  return LIVE_PATH.test(pathname);
}

/**
 * Serves the live-view page and its WebSocket on an HTTP server (the REST server, or the loopback listener of stdio
 * mode and the library). The `token` query parameter is the only credential; it is never logged.
 */
export class LiveViewDoor {
  private readonly sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });

  constructor(private readonly service: BrowserService) {}

  /** GET /live/{id}?token=...: the page, or a short error page with 401/403/404, or 429 when the session has its viewers. */
  handleRequest(req: IncomingMessage, res: ServerResponse): void {
    const { pathname, searchParams } = new URL(req.url ?? '/', 'http://localhost');
    const match = canonicalPath(req, pathname) ? LIVE_PATH.exec(pathname) : null;
    const headers = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };
    if (!match || match[2]) {
      res.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' }).end('Not found.\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...headers, allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed.\n');
      return;
    }
    try {
      this.service.live.open(decodeURIComponent(match[1]!), searchParams.get('token'));
    } catch (err) {
      const error = this.refused(err, req);
      res.writeHead(error.status, { ...headers, 'content-type': 'text/plain; charset=utf-8' }).end(`${error.message}\n`);
      return;
    }
    const nonce = randomBytes(16).toString('base64');
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/html; charset=utf-8',
      // Embeddable in an iframe; everything else locked down: no other origin, no inline code but ours.
      'content-security-policy': `default-src 'none'; img-src blob:; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'`,
    });
    res.end(req.method === 'HEAD' ? undefined : liveViewPage(nonce));
  }

  /** The WebSocket upgrade of /live/{id}/ws?token=...; refused with 401/403/404/429 before the handshake. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const { pathname, searchParams } = new URL(req.url ?? '/', 'http://localhost');
    const match = canonicalPath(req, pathname) ? LIVE_PATH.exec(pathname) : null;
    if (!match || !match[2]) return refuseUpgrade(socket, 404, 'Not Found');
    let opened: ReturnType<BrowserService['live']['open']>;
    try {
      opened = this.service.live.open(decodeURIComponent(match[1]!), searchParams.get('token'));
    } catch (err) {
      const error = this.refused(err, req);
      return refuseUpgrade(socket, error.status, error.code);
    }
    const { claims, hub } = opened;
    this.sockets.handleUpgrade(req, socket, head, (ws) => {
      const viewer = new SocketViewer(ws, claims.interactive, claims.expiresAt, () =>
        this.service.logger.info({ session: claims.sessionId }, 'live viewer dropped: it stopped reading'),
      );
      ws.send(JSON.stringify({ type: 'hello', interactive: claims.interactive }));
      let detach: () => void;
      try {
        detach = this.service.live.connect(hub, viewer);
      } catch (err) {
        // Another viewer joined between the check before the handshake and now.
        return ws.close(1013, toServiceError(err).message.slice(0, 120));
      }
      ws.on('message', (data, isBinary) => {
        if (isBinary) return hub.receiveUnreadable(viewer);
        let parsed: unknown;
        try {
          parsed = JSON.parse(data.toString());
        } catch {
          return hub.receiveUnreadable(viewer);
        }
        const input = LiveInput.safeParse(parsed);
        if (input.success) hub.receive(viewer, input.data);
        else hub.receiveUnreadable(viewer);
      });
      ws.on('close', detach);
      ws.on('error', () => ws.terminate());
    });
  }

  /** Drops every viewer connection (the HTTP server closes). */
  close(): void {
    for (const client of this.sockets.clients) client.terminate();
    this.sockets.close();
  }

  private refused(err: unknown, req: IncomingMessage): ServiceError {
    const error = toServiceError(err);
    // The token is the credential: the log names the path's session and the refusal, never the query.
    const session = LIVE_PATH.exec(new URL(req.url ?? '/', 'http://localhost').pathname)?.[1];
    this.service.logger.info({ session, code: error.code, status: error.status }, 'live view refused');
    return error;
  }
}

class SocketViewer implements LiveViewer {
  constructor(
    private readonly ws: WebSocket,
    readonly interactive: boolean,
    readonly expiresAt: number,
    private readonly onDropped: () => void,
  ) {}

  sendFrame(jpeg: Buffer, sent: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return sent();
    this.ws.send(jpeg, { binary: true }, () => sent());
    this.dropIfStalled();
  }

  send(message: LiveMessage, sent?: () => void): void {
    if (this.ws.readyState !== this.ws.OPEN) return sent?.();
    this.ws.send(JSON.stringify(message), () => sent?.());
    this.dropIfStalled();
  }

  /** Cuts off a viewer that stopped reading (its socket's 'close' detaches it from the hub). */
  private dropIfStalled(): void {
    if (this.ws.bufferedAmount <= MAX_VIEWER_BUFFERED_BYTES) return;
    this.onDropped();
    this.ws.terminate();
  }

  close(reason: LiveCloseReason, message: string): void {
    this.send({ type: 'closed', reason, message });
    this.ws.close(CLOSE_CODES[reason], message.slice(0, 120));
    // A viewer that does not answer the close handshake is cut off.
    setTimeout(() => this.ws.terminate(), 1_000).unref();
  }
}

/** Whether the request's path is as sent what URL parsing made of it: `/live/./{id}` and the like are not served. */
function canonicalPath(req: IncomingMessage, pathname: string): boolean {
  // The path as sent, less the scheme and host of an absolute-form request line.
  const raw = (req.url ?? '/').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split('?')[0];
  return raw === pathname;
}

function refuseUpgrade(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export interface LiveListenerOptions {
  /** --live-view-host, default 127.0.0.1. */
  host?: string;
  /** --live-view-port, default a free port. */
  port?: number;
}

/**
 * Serves the live view where no HTTP server runs (stdio, the library): a listener of its own, opened on the first
 * link asked for, so nothing listens until someone wants to watch.
 */
export function serveLiveOnDemand(service: BrowserService, options: LiveListenerOptions = {}): void {
  let listening: Promise<{ url: string; server: Server; door: LiveViewDoor }> | undefined;
  const open = () =>
    (listening ??= (async () => {
      const door = new LiveViewDoor(service);
      const server = createServer((req, res) => {
        const { pathname } = new URL(req.url ?? '/', 'http://localhost');
        if (isLivePath(pathname)) return door.handleRequest(req, res);
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found.\n');
      });
      server.on('upgrade', (req, socket, head) => door.handleUpgrade(req, socket, head));
      const host = options.host ?? '127.0.0.1';
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, host, () => resolve());
      });
      server.unref();
      const port = (server.address() as AddressInfo).port;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
      service.logger.info({ url }, 'live view listening');
      return { url, server, door };
    })());
  service.live.serveAt(
    async () => (await open()).url,
    async () => {
      if (!listening) return;
      const { server, door } = await listening.catch(() => ({ server: undefined, door: undefined }));
      door?.close();
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  );
}
