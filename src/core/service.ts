import type { Logger } from 'pino';
import { DEFAULTS, type ServiceConfig } from './config.js';
import { BrowserPool } from './hosts/pool.js';
import { Egress } from './egress/index.js';
import { createLogger } from './logger.js';
import {
  act,
  observe,
  screenshot,
  type ActRequest,
  type ActResult,
  type ObserveRequest,
  type ObserveResult,
  type Screenshot,
  type ScreenshotRequest,
} from './act/index.js';
import { runAgent } from './agent/loop.js';
import type { AgentExecuteRequest, AgentResult } from './agent/schema.js';
import { throwIfAborted } from './errors.js';
import { extract, type ExtractOptions } from './extract.js';
import { navigate, type NavigateRequest, type NavigationResponse } from './navigate.js';
import type { OperationContext } from './operation.js';
import { checkOptionRules, SessionRegistry, type Session, type SessionInfo, type SessionOptions } from './sessions.js';
import type { Usage } from './usage.js';
import type { Outcome } from './outcome.js';
import { watchSettle } from './snapshot/settle.js';
import {
  ProfileStore,
  SessionProfiles,
  type EndSessionRequest,
  type ProfileInfo,
  type ProfileList,
  type SaveProfileRequest,
  type StateRequest,
  type StorageState,
} from './state/index.js';

export type { Outcome } from './outcome.js';

/** One host as a readiness check shows it: nothing that could carry credentials or internal error text. */
export interface HostReadiness {
  name: string;
  state: 'up' | 'down' | 'idle';
  sessions: number;
  capacityLeft: number | null;
  accepting: boolean;
}

/** Whether this instance can take a new session now, and why: what GET /healthz answers load balancers. */
export interface Readiness {
  ready: boolean;
  hosts: HostReadiness[];
  /** New sessions this instance can take now: the accepting hosts' room, bounded by --max-sessions. */
  capacityLeft: number;
}

/**
 * The one core behind every door (MCP, REST, library). Each method is one operation; `owner` scopes
 * sessions to the caller (an API key's scope, or "local").
 */
export class BrowserService {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  /** The browser hosts sessions are placed on. */
  readonly browser: BrowserPool;
  readonly sessions: SessionRegistry;
  readonly egress: Egress;
  /** Storage state in and out of sessions, and the named profiles when `config.profiles` is set. */
  readonly profiles: SessionProfiles;

  constructor(config: Partial<ServiceConfig> = {}) {
    const logger = config.logger ?? createLogger();
    this.config = {
      headless: DEFAULTS.headless,
      browserArgs: [],
      maxSessions: DEFAULTS.maxSessions,
      sessionIdleTimeoutMs: DEFAULTS.sessionIdleTimeoutMs,
      allowFileUrls: false,
      env: process.env,
      ...config,
      logger,
    };
    this.logger = logger;
    if (this.config.sessionOptions) checkOptionRules(this.config.sessionOptions);
    const cdpEndpoints = [...(this.config.cdpEndpoint ? [this.config.cdpEndpoint] : []), ...(this.config.cdpEndpoints ?? [])];
    this.egress = this.config.egress = new Egress({
      ...this.config,
      browserEndpoints: [...(this.config.playwrightEndpoints ?? []), ...cdpEndpoints],
    });
    this.browser = new BrowserPool({ ...this.config, cdpEndpoints, extraArgs: () => this.egress.browserArgs() });
    this.sessions = new SessionRegistry(this.browser, { ...this.config, egress: this.egress });
    // The page text's settle policy needs each page's network and DOM activity from its first navigation.
    this.sessions.watchPages(watchSettle);
    const profiles = this.config.profiles;
    this.profiles = new SessionProfiles(profiles ? new ProfileStore({ ...profiles, logger }) : undefined);
  }

  /**
   * Starts a session; `options` must already be valid against SessionOptions (each door parses them). With
   * `storageState` or `profile` its context starts from that state (checked and loaded here, src/core/state).
   */
  async startSession(owner: string, options: SessionOptions = {}): Promise<SessionInfo> {
    const { storageState, profile } = await this.profiles.initial(owner, options);
    const session = await this.sessions.start(owner, options, { storageState });
    this.profiles.startedFrom(session, profile);
    return session.info(this.sessions.idleTimeoutMs);
  }

  getSession(owner: string, id: string): SessionInfo {
    return this.sessions.get(id, owner).info(this.sessions.idleTimeoutMs);
  }

  listSessions(owner: string): SessionInfo[] {
    return this.sessions.list(owner).map((session) => session.info(this.sessions.idleTimeoutMs));
  }

  /** Ends the session; with `saveProfile` its state is saved to its profile first (and it stays open if that fails). */
  async endSession(owner: string, id: string, req: EndSessionRequest = {}): Promise<void> {
    if (req.saveProfile) {
      this.profiles.checkSaveOnEnd(this.sessions.get(id, owner));
      await this.operate(owner, id, (session) => this.profiles.save(owner, session, {}));
    }
    await this.sessions.end(id, owner);
  }

  /** The session's storage state now (cookies, localStorage, IndexedDB on request); the server keeps nothing. */
  sessionState(owner: string, id: string, req: StateRequest = {}, ctx: OperationContext = {}): Promise<Outcome<StorageState>> {
    return this.operate(owner, id, (session) => this.profiles.state(session, req), ctx);
  }

  /** Saves the session's state as a named profile of `owner` (replacing one of the same name). */
  saveProfile(owner: string, id: string, req: SaveProfileRequest, ctx: OperationContext = {}): Promise<Outcome<ProfileInfo>> {
    return this.operate(owner, id, (session) => this.profiles.save(owner, session, req), ctx);
  }

  listProfiles(owner: string): Promise<ProfileList> {
    return this.profiles.list(owner);
  }

  deleteProfile(owner: string, name: string): Promise<void> {
    return this.profiles.delete(owner, name);
  }

  navigate(owner: string, id: string, req: NavigateRequest, ctx: OperationContext = {}): Promise<Outcome<NavigationResponse | null>> {
    return this.operate(owner, id, (session) => navigate(session, req, this.config, ctx), ctx);
  }

  /** `wrapped` says the schema was not an object schema (the result is the bare value). */
  extract(
    owner: string,
    id: string,
    options: ExtractOptions,
    ctx: OperationContext = {},
  ): Promise<Outcome<unknown> & { wrapped: boolean }> {
    return this.produce(owner, id, (session) => extract(session, options, this.config, ctx), ctx) as Promise<
      Outcome<unknown> & { wrapped: boolean }
    >;
  }

  /** One action on the page, by ref or by instruction, and what it changed. */
  act(owner: string, id: string, req: ActRequest, ctx: OperationContext = {}): Promise<Outcome<ActResult>> {
    return this.produce(owner, id, async (session) => withoutUsage(await act(session, req, this.config, ctx)), ctx);
  }

  /** The elements one can act on, each with the method that fits it; with an instruction, those a model picks. */
  observe(owner: string, id: string, req: ObserveRequest, ctx: OperationContext = {}): Promise<Outcome<ObserveResult>> {
    return this.produce(owner, id, async (session) => withoutUsage(await observe(session, req, this.config, ctx)), ctx);
  }

  screenshot(owner: string, id: string, req: ScreenshotRequest, ctx: OperationContext = {}): Promise<Outcome<Screenshot>> {
    return this.operate(owner, id, (session) => screenshot(session, req), ctx);
  }

  /** Runs the agent in the session's queue, so nothing else touches the page until it has finished; its usage stays in its result. */
  agentExecute(owner: string, id: string, req: AgentExecuteRequest, ctx: OperationContext = {}): Promise<Outcome<AgentResult>> {
    return this.operate(
      owner,
      id,
      (session) => runAgent({ session, config: req.agentConfig ?? {}, options: req.executeOptions, deps: { config: this.config }, ctx }),
      ctx,
    );
  }

  /**
   * Runs `work` in the session's queue and collects the page events the caller has not been told about: those of
   * this operation and any that surfaced after the previous one returned. They are also sent as progress.
   */
  operate<T>(owner: string, id: string, work: (session: Session) => Promise<T>, ctx: OperationContext = {}): Promise<Outcome<T>> {
    return this.produce(owner, id, async (session) => ({ result: await work(session) }), ctx);
  }

  /** `operate` for work that reports model usage or wrapping beside its result. */
  async produce<T>(
    owner: string,
    id: string,
    work: (session: Session) => Promise<Produced<T>>,
    ctx: OperationContext = {},
  ): Promise<Outcome<T>> {
    return this.sessions.run(id, owner, async (session) => {
      // A client that went away while this waited in the queue gets nothing from running it.
      throwIfAborted(ctx.signal);
      const { result, usage, wrapped } = await work(session);
      const pageEvents = session.log.takeUnreported();
      for (const event of pageEvents) ctx.progress?.({ message: event.message, data: { stage: 'page_event', event } });
      return { result, pageEvents, ...(usage ? { usage } : {}), ...(wrapped !== undefined ? { wrapped } : {}) };
    });
  }

  /** Whether a new session could start here now; connects remote hosts never tried yet, so the next check knows. */
  readiness(): Readiness {
    this.browser.connectIdle();
    const hosts = this.browser.status().hosts.map(({ name, state, sessions, capacityLeft, accepting }) => ({
      name,
      state,
      sessions,
      capacityLeft,
      accepting,
    }));
    const accepting = hosts.filter((host) => host.accepting);
    const hostRoom = accepting.reduce((sum, host) => sum + (host.capacityLeft ?? Infinity), 0);
    const capacityLeft = Math.min(hostRoom, this.sessions.capacityLeft);
    return { ready: capacityLeft > 0, hosts, capacityLeft };
  }

  async close(): Promise<void> {
    await this.sessions.closeAll();
    await this.browser.close();
    await this.egress.close();
  }
}

/** What an operation's work produces: its result, and the model usage and wrapping the outcome reports. */
export interface Produced<T> {
  result: T;
  usage?: Usage;
  wrapped?: boolean;
}

/** A result that carries its model usage (act, observe) hands it to the outcome, where every door reports it. */
function withoutUsage<T extends { usage?: Usage }>({ usage, ...result }: T): Produced<Omit<T, 'usage'>> {
  return { result, ...(usage ? { usage } : {}) };
}
