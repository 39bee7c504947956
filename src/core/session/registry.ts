import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { ContextProxyOptions, Egress } from '../egress/index.js';
import { ServiceError } from '../errors.js';
import type { PlacedContext } from '../hosts/host.js';
import { registerRefEngines } from '../page/ref-engine.js';
import type { BrowserPool } from '../hosts/pool.js';
import type { StorageState } from '../storage/schema.js';
import { addStateCookies } from '../storage/session-state.js';
import { RequestBlocker } from './blocking.js';
import { checkOptionsAllowed, checkTimeout, contextOptionsFor, type SessionOptions, type SessionOptionsRules } from './options.js';
import type { PageWatcher } from '../page/watched.js';
import { Session } from './session.js';

export interface SessionRegistryOptions {
  maxSessions: number;
  /** Most sessions one owner (API key) may hold at once; unset means the global limit. */
  maxSessionsPerKey?: number;
  sessionIdleTimeoutMs: number;
  logger: Logger;
  instanceId?: string;
  /** Gives each context its egress proxy when the policy filters. */
  egress?: Egress;
  /** What a popup becomes: closed and reported (default) or a tab of the session. */
  popups?: 'close' | 'tab';
  /** Which session_start options callers may use (--session-options-allowed / --session-options-denied). */
  sessionOptions?: SessionOptionsRules;
}

/** How a new session's context starts, besides the server's settings. */
export interface SessionInit {
  storageState?: StorageState;
}

/**
 * The state's origins as a context option (Playwright writes each origin's storage before the first page); its
 * cookies are set after, by addStateCookies, which can tell which one the browser refused.
 */
function stateOption(init: SessionInit): { storageState?: StorageState } {
  return init.storageState ? { storageState: { cookies: [], origins: init.storageState.origins } } : {};
}

/** All live sessions: creation with limits, lookup scoped by owner, serial execution, idle expiry. */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly watchers: PageWatcher[] = [];
  /** Sessions being started, per owner: they count against the limits before they exist. */
  private readonly starting = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  /** The idle timeout the sweeper's period is set for: the shortest of the server's and the sessions' own. */
  private sweptFor = Infinity;
  private closing = false;

  constructor(
    private readonly pool: BrowserPool,
    private readonly options: SessionRegistryOptions,
  ) {
    this.sweepFor(options.sessionIdleTimeoutMs);
  }

  /** Checks idle sessions often enough for an idle timeout of `timeoutMs` (a quarter of it, between 50 ms and a minute). */
  private sweepFor(timeoutMs: number): void {
    if (timeoutMs >= this.sweptFor || this.closing) return;
    this.sweptFor = timeoutMs;
    clearInterval(this.sweeper);
    this.sweeper = setInterval(() => void this.expireIdle(), Math.max(50, Math.min(60_000, Math.floor(timeoutMs / 4))));
    this.sweeper.unref();
  }

  /** Has `watcher` see every page of every session started from now on, from the page's creation. */
  watchPages(watcher: PageWatcher): void {
    this.watchers.push(watcher);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Open sessions plus those being started, overall or for one owner. */
  private openCount(owner?: string): number {
    let open = 0;
    // Sessions whose host was lost hold no browser; they stay listed until ended but do not count.
    for (const session of this.sessions.values())
      if (!session.closedReason && !session.pages.hostLoss() && (owner === undefined || session.owner === owner)) open++;
    if (owner !== undefined) return open + (this.starting.get(owner) ?? 0);
    for (const count of this.starting.values()) open += count;
    return open;
  }

  /** Sessions --max-sessions still allows (open and starting ones counted). */
  get capacityLeft(): number {
    return Math.max(0, this.options.maxSessions - this.openCount());
  }

  get idleTimeoutMs(): number {
    return this.options.sessionIdleTimeoutMs;
  }

  /**
   * Starts a session with `options` (already valid against SessionOptions) applied to its new context;
   * `init.storageState`: the checked cookies and storage the context starts with (src/core/storage).
   */
  async start(owner: string, options: SessionOptions = {}, init: SessionInit = {}): Promise<Session> {
    if (this.closing) throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    checkOptionsAllowed(options, this.options.sessionOptions);
    checkTimeout(options, this.options.sessionIdleTimeoutMs);
    const { maxSessions, maxSessionsPerKey } = this.options;
    const keyLimited = maxSessionsPerKey !== undefined && maxSessionsPerKey < maxSessions;
    const perKey = keyLimited ? maxSessionsPerKey : maxSessions;
    // The messages name only the caller's own figures: other keys' counts are not theirs to learn.
    if (this.openCount(owner) >= perKey)
      throw new ServiceError(
        'session_limit',
        `You already have ${perKey} open sessions, the most ${keyLimited ? 'one API key may hold (--max-sessions-per-key)' : 'this server holds at once (--max-sessions)'}. End one with session_end and try again.`,
      );
    if (this.openCount() >= this.options.maxSessions)
      throw new ServiceError(
        'session_limit',
        'The server has no free session slot right now (--max-sessions). Try again later, or end one of your sessions with session_end.',
      );
    this.starting.set(owner, (this.starting.get(owner) ?? 0) + 1);
    try {
      // With a filtering egress policy the context gets its own proxy (docs/egress.md); it closes with the context.
      // A session's upstream proxy is chained behind the filtering proxy, or used directly when nothing is filtered.
      const egress = await this.options.egress?.openContext(options.proxy);
      const proxy = egress?.contextOptions ?? (options.proxy ? { proxy: { ...options.proxy } } : undefined);
      const { context, connection } = await this.newContext(options, proxy, init).catch(async (err: unknown) => {
        await egress?.proxy.close();
        throw err;
      });
      try {
        await addStateCookies(context, init.storageState?.cookies ?? []);
        const page = await context.newPage();
        const session = new Session({
          id: newSessionId(this.options.instanceId),
          owner,
          context,
          host: connection,
          page,
          logger: this.options.logger,
          watchers: [...this.watchers],
          popups: this.options.popups ?? 'close',
          startOptions: options,
        });
        egress?.attach(session);
        session.blocker = await RequestBlocker.install(context, options, session.log, this.options.logger, Boolean(proxy?.proxy.username));
        // Raw CDP calls share the page's one CDP session: open it now, not later beside a busy renderer.
        await session.watched.cdp();
        this.sessions.set(session.id, session);
        if (options.timeoutMs !== undefined) this.sweepFor(options.timeoutMs);
        // Option names only: values may hold secrets (the proxy password, header values).
        this.options.logger.info({ session: session.id, open: this.sessions.size, options: Object.keys(options) }, 'session started');
        return session;
      } catch (err) {
        await context.close().catch(() => undefined);
        await egress?.proxy.close();
        throw connection.lost() ?? err;
      }
    } finally {
      const left = (this.starting.get(owner) ?? 1) - 1;
      if (left > 0) this.starting.set(owner, left);
      else this.starting.delete(owner);
    }
  }

  /** The one place a session's context is created; the pool picks the host. */
  private async newContext(options: SessionOptions, proxy: ContextProxyOptions | undefined, init: SessionInit): Promise<PlacedContext> {
    // Before any page exists: every injected script Playwright makes in the context then knows the ref engines.
    await registerRefEngines();
    return this.pool.newContext({ acceptDownloads: false, ...contextOptionsFor(options), ...proxy, ...stateOption(init) });
  }

  /** The session with this id if `owner` may see it; other owners get the same not-found error, so ids cannot be probed. */
  get(id: string, owner: string): Session {
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner) {
      throw new ServiceError(
        'session_not_found',
        `No session with id "${id}". It may have ended or expired after being idle; start a new one with session_start.`,
      );
    }
    if (session.closedReason) throw new ServiceError('session_closed', session.closedReason);
    return session;
  }

  list(owner: string): Session[] {
    return [...this.sessions.values()].filter((session) => session.owner === owner && !session.closedReason);
  }

  /** Runs an operation on a session after the operations queued before it. */
  run<T>(id: string, owner: string, work: (session: Session) => Promise<T>): Promise<T> {
    const session = this.get(id, owner);
    // An operation on a host that goes away fails at once, whatever it was waiting for (in the queue included).
    return session.pages.unlessHostLost(() => session.runExclusive(() => work(session)));
  }

  async end(id: string, owner: string): Promise<void> {
    const session = this.get(id, owner);
    this.sessions.delete(id);
    await session.close('This session was ended.');
    this.options.logger.info({ session: id, open: this.sessions.size }, 'session ended');
  }

  async closeAll(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweeper);
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.close('The server shut down.')));
  }

  private async expireIdle(): Promise<void> {
    const now = Date.now();
    for (const session of this.sessions.values()) {
      if (session.isBusy || now - session.lastUsedAt.getTime() < session.idleTimeoutMs(this.options.sessionIdleTimeoutMs)) continue;
      this.sessions.delete(session.id);
      this.options.logger.info({ session: session.id }, 'session expired after being idle');
      await session.close('This session expired after being idle.');
    }
  }
}

/** 160 random bits, URL-safe, after `<instanceId>.` when the server is one of several (base64url has no dot). */
export function newSessionId(instanceId?: string): string {
  const random = randomBytes(20).toString('base64url');
  return instanceId ? `${instanceId}.${random}` : random;
}

/** The instance a session id names, or undefined for an id without one. */
export function sessionInstance(id: string): string | undefined {
  const dot = id.indexOf('.');
  return dot > 0 ? id.slice(0, dot) : undefined;
}
