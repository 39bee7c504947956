import type { Browser, BrowserContext } from 'playwright-core';
import type { Logger } from 'pino';
import { ServiceError } from '../errors.js';

export type HostKind = 'local' | 'playwright' | 'cdp';

/** What a readiness check needs to know about one host. */
export interface HostStatus {
  /** "local", or the endpoint URL without credentials (no userinfo, no query string). */
  name: string;
  kind: HostKind;
  /** up: connected; down: the last attempt failed or the connection was lost; idle: not connected yet. */
  state: 'up' | 'down' | 'idle';
  /** Sessions open on this host, plus those being started there. */
  sessions: number;
  /** Sessions this host can still take under --sessions-per-host; null when unlimited. */
  capacityLeft: number | null;
  /** Whether a new session could be placed here now: up, not tried yet, or local (relaunched on demand); and not full. */
  accepting: boolean;
  /** Why the host is down. */
  lastError?: string;
  /** When down: milliseconds until the next connection attempt. */
  retryInMs?: number;
}

export interface BrowserHostOptions {
  name: string;
  kind: HostKind;
  /** Launches or connects a browser; each call is one new browser connection. */
  connect: () => Promise<Browser>;
  /** Reconnect in the background with backoff after a failure or a loss (remote hosts); local hosts relaunch on demand. */
  reconnect: boolean;
  capacity: number | undefined;
  logger: Logger;
}

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/**
 * One browser connection of a host, as the contexts opened on it see it: the host's public name and the
 * connection's loss. A lost connection takes its contexts with it; they cannot be re-attached to another.
 */
export class HostConnection {
  /** Who waits on this connection's loss: operations in flight on its contexts. */
  private readonly watchers = new Set<() => void>();

  constructor(
    readonly hostName: string,
    readonly browser: Browser,
  ) {
    browser.once('disconnected', () => {
      for (const watcher of this.watchers) watcher();
    });
  }

  /** `browser_unavailable` once the connection has been lost, else undefined. */
  lost(): ServiceError | undefined {
    return this.browser.isConnected() ? undefined : hostLostError(this.hostName);
  }

  /** Settles like `work`, or rejects with `browser_unavailable` as soon as the connection is lost. */
  race<T>(work: Promise<T>): Promise<T> {
    const lost = this.lost();
    if (lost) return Promise.reject(lost);
    let onLost!: () => void;
    const loss = new Promise<never>((_, reject) => (onLost = () => reject(hostLostError(this.hostName))));
    this.watchers.add(onLost);
    return Promise.race([work, loss]).finally(() => this.watchers.delete(onLost));
  }
}

/** A context the pool opened, and the host connection it lives on. */
export interface PlacedContext {
  context: BrowserContext;
  connection: HostConnection;
}

/**
 * One browser host of the pool: one browser connection shared by all the sessions placed on it. A lost connection
 * takes its contexts with it (they cannot be re-attached); the host then reconnects with a fresh browser.
 */
export class BrowserHost {
  private connected: HostConnection | undefined;
  private connecting: Promise<HostConnection> | undefined;
  private failures = 0;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  private open = 0;
  private reserved = 0;
  private closed = false;

  constructor(private readonly options: BrowserHostOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** Open sessions plus sessions being placed here. */
  get load(): number {
    return this.open + this.reserved;
  }

  get full(): boolean {
    return this.options.capacity !== undefined && this.load >= this.options.capacity;
  }

  get isUp(): boolean {
    return this.connected?.browser.isConnected() === true;
  }

  /** Whether a session start may try this host now: up, never tried, relaunched on demand, or due for a retry. */
  get triable(): boolean {
    return this.isUp || !this.options.reconnect || this.lastError === undefined || Date.now() >= this.retryAt;
  }

  status(): HostStatus {
    const state = this.isUp ? 'up' : this.lastError === undefined ? 'idle' : 'down';
    return {
      name: this.name,
      kind: this.options.kind,
      state,
      sessions: this.load,
      capacityLeft: this.options.capacity === undefined ? null : Math.max(0, this.options.capacity - this.load),
      accepting: !this.full && (state !== 'down' || !this.options.reconnect),
      ...(state === 'down' ? { lastError: this.lastError, retryInMs: Math.max(0, this.retryAt - Date.now()) } : {}),
    };
  }

  /** A short line for error messages naming this host. */
  describe(): string {
    if (this.isUp) return this.full ? `${this.name} (full)` : `${this.name} (up)`;
    return this.lastError ? `${this.name} (down: ${this.lastError})` : `${this.name} (not connected)`;
  }

  /** Opens a context on this host, connecting first when needed; counts it until it closes. */
  async newContext(options: Parameters<Browser['newContext']>[0]): Promise<PlacedContext> {
    this.reserved++;
    try {
      const connection = await this.connection();
      const { browser } = connection;
      let context: BrowserContext;
      try {
        context = await browser.newContext(options);
      } catch (err) {
        if (options?.storageState && browser.isConnected()) {
          const refused = storageStateRefusal(err);
          if (refused !== undefined) throw refused;
        }
        throw new ServiceError('browser_unavailable', `${this.name}: could not open a browser context: ${firstLine(err)}`, { cause: err });
      }
      this.open++;
      context.once('close', () => this.open--);
      return { context, connection };
    } finally {
      this.reserved--;
    }
  }

  /** Connects in the background when this remote host was never tried, so a readiness check soon knows whether it answers. */
  connectIfIdle(): void {
    if (this.options.reconnect && !this.connected && !this.connecting && this.lastError === undefined && !this.closed) {
      this.connection().catch(() => undefined);
    }
  }

  /** The host's browser, connecting when there is none: for tests and benchmarks that drive it directly. */
  async browser(): Promise<Browser> {
    return (await this.connection()).browser;
  }

  /** The host's connection, connecting (once, shared by concurrent callers) when there is none. */
  private connection(): Promise<HostConnection> {
    if (this.closed) return Promise.reject(new ServiceError('browser_unavailable', 'The server is shutting down.'));
    if (this.connected?.browser.isConnected()) return Promise.resolve(this.connected);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<HostConnection> {
    clearTimeout(this.retryTimer);
    let browser: Browser;
    try {
      browser = await this.options.connect();
    } catch (err) {
      this.failures++;
      this.lastError = err instanceof ServiceError ? err.message.split('\n')[0]! : firstLine(err);
      this.retryAt = Date.now() + Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (this.failures - 1));
      this.options.logger.warn({ host: this.name, err: this.lastError, retryInMs: this.retryAt - Date.now() }, 'browser host down');
      this.scheduleRetry();
      // The local host's own message says best what to do (e.g. how to install Chromium).
      if (err instanceof ServiceError && this.options.kind === 'local') throw err;
      throw new ServiceError('browser_unavailable', `${this.name}: ${this.lastError}`, { cause: err });
    }
    if (this.closed) {
      await browser.close().catch(() => undefined);
      throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    }
    const wasDown = this.lastError !== undefined;
    const connection = new HostConnection(this.name, browser);
    this.connected = connection;
    this.failures = 0;
    this.lastError = undefined;
    browser.once('disconnected', () => this.onDisconnected(connection));
    this.options.logger.info({ host: this.name, kind: this.options.kind }, wasDown ? 'browser host back up' : 'browser host connected');
    return connection;
  }

  private onDisconnected(connection: HostConnection): void {
    if (this.connected !== connection) return;
    this.connected = undefined;
    if (this.closed) return;
    this.failures = 1;
    this.lastError = 'the connection to its browser was lost';
    this.retryAt = Date.now() + FIRST_RETRY_MS;
    this.options.logger.warn({ host: this.name }, 'browser host lost; its sessions are gone');
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (!this.options.reconnect || this.closed) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.browser().catch(() => undefined), Math.max(0, this.retryAt - Date.now()));
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const connection = this.connected ?? (await this.connecting?.catch(() => undefined));
    this.connected = undefined;
    if (connection?.browser.isConnected()) await connection.browser.close().catch(() => undefined);
  }
}

function hostLostError(name: string): ServiceError {
  return new ServiceError(
    'browser_unavailable',
    `The browser host ${name} was lost, and this session's pages with it. End it with session_end and start a new session.`,
  );
}

/**
 * Playwright's refusal of a storage state it was given (it prefixes the reason with this line), as the caller's
 * error: a state the browser cannot restore is a 400, not a host that is down (a 503 clients retry).
 */
function storageStateRefusal(err: unknown): ServiceError | undefined {
  const lines = (err instanceof Error ? err.message : String(err)).split('\n');
  const at = lines.findIndex((line) => line.includes('Error setting storage state:'));
  if (at < 0) return undefined;
  const reason = (lines[at + 1] ?? '').trim().replace(/\.$/, '').slice(0, 300);
  return new ServiceError('invalid_argument', `The browser refused the storage state: ${reason || 'no reason given'}.`, { cause: err });
}

export function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? message;
}
