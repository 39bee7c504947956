import type { Browser } from 'playwright-core';
import type { Logger } from 'pino';
import { DEFAULT_CHROMIUM_ARGS } from '../browser.js';
import { ServiceError } from '../errors.js';
import { BrowserHost, type HostStatus, type PlacedContext } from './host.js';
import { launchLocal } from './local.js';
import { connectCdp, connectPlaywright, missingFlags, publicEndpoint, remoteLaunchOptions, type RemoteLaunchOptions } from './remote.js';

export type ContextOptions = Parameters<Browser['newContext']>[0];

export interface BrowserPoolOptions {
  /** Playwright server endpoints (ws://...), one host each. */
  playwrightEndpoints?: string[];
  /** Chrome DevTools endpoints (http://... or ws://...), one host each. */
  cdpEndpoints?: string[];
  /** Sent to Playwright endpoints; merged over headless and our Chromium flags. */
  remoteLaunchOptions?: RemoteLaunchOptions;
  /** Most sessions on one host; unset: no limit per host. */
  sessionsPerHost?: number;
  executablePath?: string;
  headless: boolean;
  browserArgs: string[];
  /** Flags decided when a browser is launched (the egress policy's), for the local launch and Playwright servers. */
  extraArgs?: () => string[];
  env: Record<string, string | undefined>;
  logger: Logger;
}

/** What a readiness check needs: every host's state, and how many more sessions the pool can take. */
export interface PoolStatus {
  hosts: HostStatus[];
  /** Hosts connected now. */
  up: number;
  /** Sessions the connected hosts can still take; null when they have no --sessions-per-host limit. */
  capacityLeft: number | null;
}

/**
 * The browser hosts sessions are placed on: remote Playwright servers and CDP browsers when configured, otherwise
 * one local Chromium. A new session goes to the least-loaded healthy host with room; a failing host is skipped.
 */
export class BrowserPool {
  readonly hosts: BrowserHost[];
  private closed = false;

  constructor(options: BrowserPoolOptions) {
    const capacity = options.sessionsPerHost;
    const { logger } = options;
    // Built at each connection: the extra flags are only known once the egress policy is in use.
    const launchOptions = () =>
      remoteLaunchOptions({
        headless: options.headless,
        browserArgs: [...(options.extraArgs?.() ?? []), ...options.browserArgs],
        user: options.remoteLaunchOptions,
      });
    const names = new Set<string>();
    const unique = (endpoint: string) => {
      let name = publicEndpoint(endpoint);
      // Endpoints that differ only in their credentials would share a name; keep names unique.
      for (let n = 2; names.has(name); n++) name = `${publicEndpoint(endpoint)}#${n}`;
      names.add(name);
      return name;
    };
    const remote = [
      ...(options.playwrightEndpoints ?? []).map(
        (endpoint) =>
          new BrowserHost({
            name: unique(endpoint),
            kind: 'playwright',
            connect: () => connectPlaywright(endpoint, launchOptions()).then((browser) => warnOnMissingFlags(browser, endpoint, logger)),
            reconnect: true,
            capacity,
            logger,
          }),
      ),
      ...(options.cdpEndpoints ?? []).map(
        (endpoint) =>
          new BrowserHost({ name: unique(endpoint), kind: 'cdp', connect: () => connectCdp(endpoint), reconnect: true, capacity, logger }),
      ),
    ];
    this.hosts = remote.length
      ? remote
      : [
          new BrowserHost({
            name: 'local',
            kind: 'local',
            connect: () => launchLocal({ ...options, browserArgs: [...(options.extraArgs?.() ?? []), ...options.browserArgs] }),
            reconnect: false,
            capacity,
            logger,
          }),
        ];
  }

  /**
   * Opens a browser context on the least-loaded host that is up (or due for a retry) and has room, falling through
   * to the next host when one fails. The one place contexts are created.
   */
  async newContext(options: ContextOptions): Promise<PlacedContext> {
    if (this.closed) throw new ServiceError('browser_unavailable', 'The server is shutting down.');
    const failures: ServiceError[] = [];
    const candidates = this.hosts
      .filter((host) => host.triable && !host.full)
      .sort((a, b) => a.load - b.load || Number(b.isUp) - Number(a.isUp));
    for (const host of candidates) {
      try {
        return await host.newContext(options);
      } catch (err) {
        failures.push(err instanceof ServiceError ? err : new ServiceError('browser_unavailable', String(err), { cause: err }));
      }
    }
    // One host and its own error says it best (e.g. how to install Chromium).
    if (this.hosts.length === 1 && failures.length === 1) throw failures[0];
    if (failures.length === 0 && this.hosts.every((host) => host.isUp && host.full)) {
      throw new ServiceError(
        'session_limit',
        `Every browser host has --sessions-per-host sessions open (${this.hosts.map((host) => host.name).join(', ')}). End a session and try again.`,
      );
    }
    throw new ServiceError(
      'browser_unavailable',
      `No browser host could take the session. Hosts: ${this.hosts.map((host) => host.describe()).join('; ')}.`,
      { details: { hosts: this.status().hosts } },
    );
  }

  status(): PoolStatus {
    const hosts = this.hosts.map((host) => host.status());
    const up = hosts.filter((host) => host.state === 'up');
    const capacityLeft = up.some((host) => host.capacityLeft === null) ? null : up.reduce((sum, host) => sum + host.capacityLeft!, 0);
    return { hosts, up: up.length, capacityLeft };
  }

  /** Starts connecting the remote hosts not tried yet (they connect at their first session otherwise): for readiness checks. */
  connectIdle(): void {
    for (const host of this.hosts) host.connectIfIdle();
  }

  /** The first host's browser, connecting if needed: for tests and benchmarks that drive it directly. */
  get(): Promise<Browser> {
    return this.hosts[0]!.browser();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.hosts.map((host) => host.close()));
  }
}

/** Says in the log when a Playwright server ignored our launch flags (it needs --unsafe to accept them). */
async function warnOnMissingFlags(browser: Browser, endpoint: string, logger: Logger): Promise<Browser> {
  const missing = await missingFlags(browser, DEFAULT_CHROMIUM_ARGS).catch(() => []);
  if (missing.length) {
    logger.warn(
      { host: publicEndpoint(endpoint), missing },
      'the browser host launched Chromium without our flags (start run-server with --unsafe, or give the flags to launchServer); it may stall on a closed network',
    );
  }
  return browser;
}
