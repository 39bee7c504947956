import type { Logger } from 'pino';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import type { HumanRequest } from '../operation.js';
import type { Session, SessionRegistry } from '../sessions.js';
import { SessionLive, type LiveViewer } from './hub.js';
import { LIVE_TOKEN_DEFAULT_TTL_MS, LIVE_TOKEN_MAX_TTL_MS, LiveTokens, type LiveClaims } from './token.js';

export { LiveInput } from './input.js';
export type { LiveMessage, LiveRefused, LiveStatus, LiveViewer, LiveCloseReason } from './hub.js';
export { agentAsks, MAX_COPIED_CHARS, MAX_VIEWERS_PER_SESSION } from './hub.js';
export { LIVE_DRAIN_TIMEOUT_MS, LIVE_INPUT_TIMEOUT_MS, MAX_QUEUED_INPUT, REFUSALS, STALE_POINTER_MS } from './queue.js';
export { LIVE_TOKEN_DEFAULT_TTL_MS, LIVE_TOKEN_MAX_TTL_MS } from './token.js';

export const LiveViewRequest = z
  .object({
    interactive: z.boolean().optional().describe('Default true; false: watch only.'),
    expiresInMs: z.number().int().min(1_000).max(LIVE_TOKEN_MAX_TTL_MS).optional().describe('Default 15 min.'),
    takeover: z.boolean().optional().describe('Hold the page for the person now; operations wait until Done.'),
  })
  .strict();
export type LiveViewRequest = z.infer<typeof LiveViewRequest>;

export const LiveViewResult = z.object({
  url: z.string().describe('Open in a browser or an iframe; the link is the only credential.'),
  expiresAt: z.string(),
  interactive: z.boolean(),
});
export type LiveViewResult = z.infer<typeof LiveViewResult>;

/** The base URL (scheme, host, port) where the live-view pages are served; opened on first use in stdio mode. */
export type LiveViewServer = () => Promise<string>;

export const LIVE_DEFAULTS = { takeoverTimeoutMs: 10 * 60_000, takeoverFirstViewerMs: 60_000, askHumanTimeoutMs: 10 * 60_000 } as const;

export interface LiveViewsOptions {
  logger: Logger;
  /** --live-view-secret; random per process when unset. */
  secret?: string;
  /** --live-view-public-url: the base clients get, when the server sits behind a proxy. */
  publicUrl?: string;
  takeoverTimeoutMs?: number;
  takeoverFirstViewerMs?: number;
}

/**
 * Live views of every session: signed links, one hub per watched session, and persons holding pages. Core: the doors
 * serve the page and its WebSocket and hand each connection to `connect`.
 */
export class LiveViews {
  private readonly tokens: LiveTokens;
  private readonly hubs = new Map<string, SessionLive>();
  private server: LiveViewServer | undefined;
  private closeServer: (() => Promise<void>) | undefined;

  constructor(
    private readonly sessions: SessionRegistry,
    private readonly options: LiveViewsOptions,
  ) {
    this.tokens = new LiveTokens(options.secret);
  }

  /** Where the pages are served: the HTTP server's own URL, or a loopback listener opened on first use. */
  serveAt(server: LiveViewServer, close?: () => Promise<void>): void {
    this.server = server;
    this.closeServer = close;
  }

  get served(): boolean {
    return this.server !== undefined;
  }

  /** A signed link to the session's live view, bound to the session and the owner who asked. */
  async create(session: Session, request: LiveViewRequest = {}): Promise<LiveViewResult> {
    const interactive = request.interactive ?? true;
    const expiresAt = Date.now() + (request.expiresInMs ?? LIVE_TOKEN_DEFAULT_TTL_MS);
    const url = await this.url({ sessionId: session.id, owner: session.owner, interactive, expiresAt });
    if (request.takeover && interactive) this.hub(session).takeover();
    return { url, expiresAt: new Date(expiresAt).toISOString(), interactive };
  }

  /**
   * The token's session and hub, or the 401/403/404 to answer (a link outlives neither its expiry nor its session), or
   * 429 `viewer_limit` when the session has as many viewers as it may.
   */
  open(sessionId: string, token: string | null | undefined): { claims: LiveClaims; hub: SessionLive } {
    const claims = this.tokens.verify(token, sessionId);
    const session = this.sessions.get(claims.sessionId, claims.owner);
    const hub = this.hub(session);
    hub.admit();
    return { claims, hub };
  }

  /** Adds a connected viewer to the session's hub; returns its input handler and the function that removes it. */
  connect(hub: SessionLive, viewer: LiveViewer): () => void {
    return hub.attach(viewer);
  }

  /**
   * Gives the page to a person from inside an operation (the agent's ask_human): an interactive link, `notify` to the
   * door, then the wait for Done (`timeout` after `timeoutMs`, `cancelled` with the signal).
   */
  async askHuman(
    session: Session,
    {
      reason,
      timeoutMs,
      signal,
      notify,
    }: { reason: string; timeoutMs: number; signal?: AbortSignal; notify: (request: HumanRequest) => void },
  ): Promise<void> {
    const hub = this.hub(session);
    const finished = hub.waitForPerson(reason, timeoutMs, signal);
    try {
      const expiresAt = Date.now() + timeoutMs + 60_000;
      const url = await this.url({ sessionId: session.id, owner: session.owner, interactive: true, expiresAt });
      notify({
        sessionId: session.id,
        url,
        reason,
        expiresAt: new Date(expiresAt).toISOString(),
        finished: finished.catch(() => undefined),
        decline: (message) => hub.failWait(new Error(message)),
      });
    } catch (err) {
      hub.failWait(err instanceof Error ? err : new Error(String(err)));
      await finished.catch(() => undefined);
      throw err;
    }
    await finished;
  }

  /** Closes every viewer of every session, and the listener serving them when it is the live view's own (shutdown). */
  async close(): Promise<void> {
    for (const hub of [...this.hubs.values()]) hub.closeAll('shutdown', 'The server is shutting down.');
    this.hubs.clear();
    await this.closeServer?.();
  }

  /** How many sessions have a hub and how many viewers watch (benchmarks, tests). */
  stats(): { hubs: number; viewers: number } {
    let viewers = 0;
    for (const hub of this.hubs.values()) viewers += hub.viewerCount;
    return { hubs: this.hubs.size, viewers };
  }

  hubOf(sessionId: string): SessionLive | undefined {
    return this.hubs.get(sessionId);
  }

  private hub(session: Session): SessionLive {
    let hub = this.hubs.get(session.id);
    if (hub && hub.session !== session) hub = undefined;
    if (!hub) {
      const created = new SessionLive(session, {
        logger: this.options.logger,
        takeoverTimeoutMs: this.options.takeoverTimeoutMs ?? LIVE_DEFAULTS.takeoverTimeoutMs,
        takeoverFirstViewerMs: this.options.takeoverFirstViewerMs ?? LIVE_DEFAULTS.takeoverFirstViewerMs,
        onIdle: () => {
          if (this.hubs.get(session.id) !== created || !created.idle) return;
          this.hubs.delete(session.id);
          created.onDrop?.();
        },
      });
      hub = created;
      this.hubs.set(session.id, hub);
      // Ending the session closes its viewers and ends a person's wait at once.
      const onClose = () => created.closeAll('ended', 'The session has ended.');
      session.context.once('close', onClose);
      created.onDrop = () => session.context.off('close', onClose);
    }
    return hub;
  }

  /**
   * The base of every link (the public URL when set, else where the pages are served), without a trailing slash; in
   * stdio mode it opens the listener, as the first link does.
   */
  async base(): Promise<string> {
    if (!this.server)
      throw new ServiceError('not_implemented', 'Live view is not served by this server (no HTTP server or loopback listener).');
    const served = await this.server();
    return (this.options.publicUrl ?? served).replace(/\/+$/, '');
  }

  private async url(claims: LiveClaims): Promise<string> {
    return `${await this.base()}/live/${encodeURIComponent(claims.sessionId)}?token=${this.tokens.issue(claims)}`;
  }
}
