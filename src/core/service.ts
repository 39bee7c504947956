import type { Logger } from 'pino';
import { BrowserManager } from './browser.js';
import { DEFAULTS, type ServiceConfig } from './config.js';
import { Egress } from './egress/index.js';
import { createLogger } from './logger.js';
import { runAgent } from './agent/loop.js';
import type { AgentExecuteRequest, AgentResult } from './agent/schema.js';
import { throwIfAborted } from './errors.js';
import { extract, type ExtractOptions } from './extract.js';
import { navigate, type NavigateRequest, type NavigationResponse } from './navigate.js';
import type { OperationContext } from './operation.js';
import { SessionRegistry, type PageEvent, type Session, type SessionInfo } from './sessions.js';
import type { Usage } from './usage.js';
import { watchSettle } from './snapshot/settle.js';

/**
 * The plain result of an operation on a session, with its metadata: what the page did meanwhile (dialogs, popups,
 * crashes) and the model usage when a model was called. Doors shape it (envelope, actionId, structuredContent).
 */
export interface Outcome<T> {
  result: T;
  pageEvents: PageEvent[];
  /** Token usage of the operation's model calls; absent when none was made (or, for the agent, inside its result). */
  usage?: Usage;
}

/** An extract outcome: `wrapped` tells the doors whose results must be objects to send `{value: result}`. */
export interface ExtractionOutcome extends Outcome<unknown> {
  wrapped: boolean;
}

/**
 * The one core behind every door (MCP, REST, library). Each method is one operation; `owner` scopes
 * sessions to the caller (an API key's scope, or "local").
 */
export class BrowserService {
  readonly config: ServiceConfig;
  readonly logger: Logger;
  readonly browser: BrowserManager;
  readonly sessions: SessionRegistry;
  readonly egress: Egress;

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
    this.egress = this.config.egress = new Egress(this.config);
    this.browser = new BrowserManager({ ...this.config, extraArgs: () => this.egress.browserArgs() });
    this.sessions = new SessionRegistry(this.browser, { ...this.config, egress: this.egress });
    // The page text's settle policy needs each page's network and DOM activity from its first navigation.
    this.sessions.watchPages(watchSettle);
  }

  async startSession(owner: string): Promise<SessionInfo> {
    const session = await this.sessions.start(owner);
    return session.info(this.sessions.idleTimeoutMs);
  }

  getSession(owner: string, id: string): SessionInfo {
    return this.sessions.get(id, owner).info(this.sessions.idleTimeoutMs);
  }

  listSessions(owner: string): SessionInfo[] {
    return this.sessions.list(owner).map((session) => session.info(this.sessions.idleTimeoutMs));
  }

  async endSession(owner: string, id: string): Promise<void> {
    await this.sessions.end(id, owner);
  }

  navigate(owner: string, id: string, req: NavigateRequest, ctx: OperationContext = {}): Promise<Outcome<NavigationResponse | null>> {
    return this.operate(owner, id, (session) => navigate(session, req, this.config, ctx), ctx);
  }

  async extract(owner: string, id: string, options: ExtractOptions, ctx: OperationContext = {}): Promise<ExtractionOutcome> {
    const { result, pageEvents } = await this.operate(owner, id, (session) => extract(session, options, this.config, ctx), ctx);
    return { result: result.result, wrapped: result.wrapped, pageEvents, ...(result.usage ? { usage: result.usage } : {}) };
  }

  /** Runs the agent in the session's queue, so nothing else touches the page until it has finished. */
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
  async operate<T>(owner: string, id: string, work: (session: Session) => Promise<T>, ctx: OperationContext = {}): Promise<Outcome<T>> {
    return this.sessions.run(id, owner, async (session) => {
      // A client that went away while this waited in the queue gets nothing from running it.
      throwIfAborted(ctx.signal);
      const result = await work(session);
      const pageEvents = session.log.takeUnreported();
      for (const event of pageEvents) ctx.progress?.({ message: event.message, data: { stage: 'page_event', event } });
      return { result, pageEvents };
    });
  }

  async close(): Promise<void> {
    await this.sessions.closeAll();
    await this.browser.close();
    await this.egress.close();
  }
}
