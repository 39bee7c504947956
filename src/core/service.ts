import type { Logger } from 'pino';
import { DEFAULTS, type ServiceConfig } from './config.js';
import { BrowserPool } from './hosts/pool.js';
import { Egress } from './egress/index.js';
import { createLogger } from './logger.js';
import { throwIfAborted } from './errors.js';
import { newActionId, type OperationContext } from './operation.js';
import { LiveViews, type LiveViewRequest, type LiveViewResult } from './live/index.js';
import type { PageLocation } from './location.js';
import {
  RetainedRecordings,
  TraceRecorder,
  notRecorded,
  traceOptions,
  type ActionLogEntry,
  type RunStep,
  type StepInfo,
} from './recording/index.js';
import { checkOptionRules, SessionRegistry, type Session, type SessionInfo, type SessionOptions } from './sessions.js';
import type { Usage } from './usage.js';
import type { LoadedPage, Outcome } from './outcome.js';
import { watchSettle } from './settle/index.js';
import { screenshot, warmTargets } from './act/index.js';
import { bounded } from './page/cdp.js';
import { ProfileStore, SessionProfiles, StoredRuns, type EndSessionRequest, type ProfileList } from './profiles/index.js';

export type { Outcome } from './outcome.js';

/** The trace's masked frames: JPEG like the browser's screencast, at most 800 px a side, within 2 s. */
const TRACE_FRAME = { format: 'jpeg', quality: 70 } as const;
const TRACE_FRAME_SIDE = 800;
const TRACE_FRAME_MS = 2_000;

/** One host as a readiness check shows it: nothing that could carry credentials or internal error text. */
export interface HostReadiness {
  name: string;
  state: 'up' | 'down' | 'idle';
  sessions: number;
  capacityLeft: number | null;
  accepting: boolean;
}

/** What session_start may ask for: the session options, a recording among them (docs/recording.md). */
export type StartSessionOptions = SessionOptions;

/** A session's action log: the kept entries, oldest first, and how many older ones were dropped. */
export interface ActionLogPage {
  entries: ActionLogEntry[];
  dropped: number;
}

/** One operation run by `step`: who asks, on which session, what it is for the log, and the work. */
interface StepCall<T> {
  owner: string;
  id: string;
  ctx: OperationContext;
  step?: Omit<StepInfo, 'actionId'>;
  work: (session: Session) => Promise<Produced<T>>;
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
  /** Live views and persons holding pages (docs/live-view.md). */
  readonly live: LiveViews;
  /** Recordings and action logs of ended sessions, kept for --recording-retention. */
  readonly retained: RetainedRecordings;
  /** Storage state in and out of sessions, and the named profiles when `config.profiles` is set. */
  readonly profiles: SessionProfiles;
  /** Runs kept for replay and cached agent runs, per API key: with the profiles when they are kept, else in memory. */
  readonly runs: StoredRuns;

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
    // Every action's target is described for the session's run (docs/replay.md): ready before the first act.
    this.sessions.watchPages(warmTargets);
    this.live = new LiveViews(this.sessions, { logger, ...this.config.liveView });
    this.retained = new RetainedRecordings(this.config.recordingRetentionMs ?? 0, logger);
    const profiles = this.config.profiles;
    this.profiles = new SessionProfiles(profiles ? new ProfileStore({ ...profiles, logger }) : undefined);
    this.runs = new StoredRuns(this.profiles.store);
  }

  /**
   * Starts a session; `options` must already be valid against session_start's input (each door parses them). With
   * `storageState` or `profile` its context starts from that state (checked and loaded here, src/core/profiles); with
   * `record` it is traced (src/core/recording).
   */
  async startSession(owner: string, options: StartSessionOptions = {}): Promise<SessionInfo> {
    const { storageState, profile } = await this.profiles.initial(owner, options);
    const session = await this.sessions.start(owner, options, { storageState });
    this.profiles.startedFrom(session, profile);
    session.onClose(() => this.retained.sessionEnding(session.id, owner, session.recording));
    const trace = traceOptions(options.record);
    if (trace) {
      try {
        session.recording.trace = await TraceRecorder.start(session.context, trace, 'browser-session-mcp');
      } catch (err) {
        await this.sessions.end(session.id, owner).catch(() => undefined);
        throw err;
      }
    }
    return session.info(this.sessions.idleTimeoutMs);
  }

  /** The session's Playwright trace so far as a zip, secrets scrubbed; kept after the end for --recording-retention. */
  async recording(owner: string, id: string): Promise<Buffer> {
    const ended = this.retained.get(id, owner);
    if (ended) {
      if (!ended.trace) throw notRecorded();
      return ended.traceZip();
    }
    // In the session's queue: the chunk is cut between operations, never inside one.
    return this.sessions.run(id, owner, (session) => session.recording.traceZip());
  }

  /** The session's action log (every session keeps one; the last 1,000 operations). */
  actionLog(owner: string, id: string): ActionLogPage {
    return this.retained.log(id, owner) ?? this.sessions.get(id, owner).recording.log.list();
  }

  /** The steps of the session's run (all, or one operation's), kept after the end for --recording-retention as its log. */
  runSteps(
    owner: string,
    id: string,
    actionId?: string,
  ): { steps: RunStep[]; dropped: number; viewport?: { width: number; height: number } } {
    const ended = this.retained.get(id, owner);
    const session = ended ? undefined : this.sessions.get(id, owner);
    const steps = (ended ?? session!.recording).steps;
    const viewport = session?.page.viewportSize() ?? undefined;
    return { steps: steps.list(actionId), dropped: actionId === undefined ? steps.dropped : 0, ...(viewport ? { viewport } : {}) };
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

  /** A signed link to watch (and, interactive, drive) the session; not queued, so it works while an operation runs. */
  liveView(owner: string, id: string, req: LiveViewRequest = {}): Promise<LiveViewResult> {
    return this.live.create(this.sessions.get(id, owner), req);
  }

  listProfiles(owner: string): Promise<ProfileList> {
    return this.profiles.list(owner);
  }

  deleteProfile(owner: string, name: string): Promise<void> {
    return this.profiles.delete(owner, name);
  }

  /**
   * Runs a session operation of the table (src/core/operations) as every door does: its work in the session's
   * queue, a trace group and an action log entry named by the operation (its tool name), and the page events the
   * caller has not been told about.
   */
  run<I extends object, R>(
    operation: SessionWork<I, R>,
    owner: string,
    id: string,
    input: I,
    ctx: OperationContext = {},
  ): Promise<Outcome<R>> {
    const step =
      operation.logged === false
        ? undefined
        : { operation: operation.name, arguments: { ...input } as Record<string, unknown>, variables: operation.variables?.(input) };
    return this.step({ owner, id, ctx, step, work: (session) => operation.work(session, input, { service: this, owner, ctx }) });
  }

  /**
   * Runs `work` in the session's queue and collects the page events the caller has not been told about: those of
   * this operation and any that surfaced after the previous one returned. They are also sent as progress.
   */
  operate<T>(owner: string, id: string, work: (session: Session) => Promise<T>, ctx: OperationContext = {}): Promise<Outcome<T>> {
    return this.step({ owner, id, ctx, work: async (session) => ({ result: await work(session) }) });
  }

  /**
   * Runs `work` in the session's queue, named in the action log and the trace when `step` says what the operation is.
   * The one place an operation's actionId is made (unless the door gave one as ctx.actionId): every door answers
   * this one.
   */
  private step<T>({ owner, id, ctx, step, work }: StepCall<T>): Promise<Outcome<T>> {
    const actionId = ctx.actionId ?? newActionId();
    return this.sessions.run(id, owner, async (session) => {
      // A client that went away while this waited in the queue gets nothing from running it.
      throwIfAborted(ctx.signal);
      const since = session.log.lastSeq;
      const page = {
        url: () => session.page.url(),
        events: () => session.log.since(since),
        // The trace's frame of the page as the step left it, secrets masked (recording.ts); a stuck page costs 2 s at most.
        picture: () => bounded(screenshot(session, TRACE_FRAME, { maxSide: TRACE_FRAME_SIDE }), TRACE_FRAME_MS, 'taking the trace frame'),
      };
      const run = () => work(session);
      const {
        result,
        usage,
        wrapped,
        page: loaded,
        location,
      } = await (step ? session.recording.step({ ...step, actionId }, page, run) : run());
      const pageEvents = session.log.takeUnreported();
      for (const event of pageEvents) ctx.progress?.({ message: event.message, data: { stage: 'page_event', event } });
      return {
        result,
        actionId,
        pageEvents,
        ...(usage ? { usage } : {}),
        ...(wrapped !== undefined ? { wrapped } : {}),
        ...(loaded ? { page: loaded } : {}),
        ...(location ? { location } : {}),
      };
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
    await this.live.close();
    await this.sessions.closeAll();
    await this.retained.close();
    await this.browser.close();
    await this.egress.close();
  }
}

/** A session operation as `BrowserService.run` runs it: its name (the tool's) and its work on the session. */
export interface SessionWork<I, R> {
  name: string;
  work(session: Session, input: I, call: WorkCall): Promise<Produced<R>>;
  /** The `%name%` values the input fills in: masked in the action log and the trace from then on. */
  variables?(input: I): Record<string, string | { value: string }> | undefined;
  /** Not in the action log or the trace (reading the session's own storage). */
  logged?: false;
}

/** What an operation's work may use besides the session. */
export interface WorkCall {
  service: BrowserService;
  owner: string;
  ctx: OperationContext;
}

/** What an operation's work produces: its result, and the model usage and wrapping the outcome reports. */
export interface Produced<T> {
  result: T;
  usage?: Usage;
  wrapped?: boolean;
  page?: LoadedPage;
  location?: PageLocation;
}
