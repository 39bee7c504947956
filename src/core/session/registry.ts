import { randomBytes } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import type { Logger } from 'pino';
import type { BrowserManager } from '../browser.js';
import { ServiceError } from '../errors.js';
import type { PageWatcher } from './page.js';
import { Session } from './session.js';

export interface SessionRegistryOptions {
  maxSessions: number;
  /** Most sessions one owner (API key) may hold at once; unset means the global limit. */
  maxSessionsPerKey?: number;
  sessionIdleTimeoutMs: number;
  logger: Logger;
}

/** All live sessions: creation with limits, lookup scoped by owner, serial execution, idle expiry. */
export class SessionRegistry {
  private readonly sessions = new Map<string, Session>();
  private readonly watchers: PageWatcher[] = [];
  /** Sessions being started, per owner: they count against the limits before they exist. */
  private readonly starting = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;

  constructor(
    private readonly browser: BrowserManager,
    private readonly options: SessionRegistryOptions,
  ) {
    const every = Math.max(50, Math.min(60_000, Math.floor(options.sessionIdleTimeoutMs / 4)));
    this.sweeper = setInterval(() => void this.expireIdle(), every);
    this.sweeper.unref();
    browser.onDisconnect(() => this.dropAll('The browser process exited; this session is gone. Start a new session.'));
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
    for (const session of this.sessions.values()) if (!session.closedReason && (owner === undefined || session.owner === owner)) open++;
    if (owner !== undefined) return open + (this.starting.get(owner) ?? 0);
    for (const count of this.starting.values()) open += count;
    return open;
  }

  get idleTimeoutMs(): number {
    return this.options.sessionIdleTimeoutMs;
  }

  async start(owner: string): Promise<Session> {
    if (this.closing) throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    const perKey = Math.min(this.options.maxSessionsPerKey ?? this.options.maxSessions, this.options.maxSessions);
    // The messages name only the caller's own figures: other keys' counts are not theirs to learn.
    if (this.openCount(owner) >= perKey)
      throw new ServiceError(
        'session_limit',
        `You already have ${perKey} open sessions, the most one API key may hold (--max-sessions-per-key). End one with session_end and try again.`,
      );
    if (this.openCount() >= this.options.maxSessions)
      throw new ServiceError(
        'session_limit',
        'The server has no free session slot right now (--max-sessions). Try again later, or end one of your sessions with session_end.',
      );
    this.starting.set(owner, (this.starting.get(owner) ?? 0) + 1);
    try {
      const context = await this.newContext();
      try {
        const page = await context.newPage();
        const session = new Session({
          id: newSessionId(),
          owner,
          context,
          page,
          logger: this.options.logger,
          watchers: [...this.watchers],
        });
        // Raw CDP calls share the page's one CDP session: open it now, not later beside a busy renderer.
        await session.watched.cdp();
        this.sessions.set(session.id, session);
        this.options.logger.info({ session: session.id, open: this.sessions.size }, 'session started');
        return session;
      } catch (err) {
        await context.close().catch(() => undefined);
        throw err;
      }
    } finally {
      const left = (this.starting.get(owner) ?? 1) - 1;
      if (left > 0) this.starting.set(owner, left);
      else this.starting.delete(owner);
    }
  }

  private async newContext(): Promise<BrowserContext> {
    const options = { acceptDownloads: false, viewport: { width: 1280, height: 800 } };
    const browser = await this.browser.get();
    try {
      return await browser.newContext(options);
    } catch (err) {
      if (browser.isConnected())
        throw new ServiceError(
          'browser_unavailable',
          `Could not open a browser context: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
          { cause: err },
        );
      // The browser died between launch and use; relaunch once.
      return (await this.browser.get()).newContext(options);
    }
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
    return session.runExclusive(() => work(session));
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
      if (session.isBusy || now - session.lastUsedAt.getTime() < this.options.sessionIdleTimeoutMs) continue;
      this.sessions.delete(session.id);
      this.options.logger.info({ session: session.id }, 'session expired after being idle');
      await session.close('This session expired after being idle.');
    }
  }

  private dropAll(reason: string): void {
    for (const session of this.sessions.values()) session.closedReason ??= reason;
    // Keep them one sweep so callers get the clear reason instead of not-found; the contexts died with the browser.
    setTimeout(() => {
      for (const [id, session] of this.sessions) if (session.closedReason === reason) this.sessions.delete(id);
    }, 60_000).unref();
  }
}

/** 160 random bits, URL-safe. */
export function newSessionId(): string {
  return randomBytes(20).toString('base64url');
}
