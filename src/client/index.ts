import { z } from 'zod';
import { LiveViewRequest, type LiveViewResult } from '../core/live/index.js';
import { serveLiveOnDemand } from '../live/server.js';
import { AgentConfig as AgentConfigWire, AgentExecuteOptions, type AgentConfig, type AgentResult } from '../core/agent/schema.js';

type AgentConfigWireType = z.infer<typeof AgentConfigWire>;
import type { ServiceConfig } from '../core/config.js';
import type { Action, ActRequest, ActResult, ObserveRequest, ObserveResult, ScreenshotRequest } from '../core/act/index.js';
import type { NavigateRequest, NavigationResponse } from '../core/navigate.js';
import type { ProgressEvent } from '../core/operation.js';
import { outcomeMeta } from '../core/outcome.js';
import { actOperation, observeOperation } from '../core/operations/act.js';
import { agentExecuteOperation } from '../core/operations/agent.js';
import { checkOperationsDenied, findOperation, type BinaryResult, type OperationName, OPERATIONS } from '../core/operations/index.js';
import { navigateOperation } from '../core/operations/navigate.js';
import { profileDelete, profileList, profileSave, sessionState } from '../core/operations/profiles.js';
import { sessionTrace } from '../core/operations/recording.js';
import { replayOperation, sessionScript } from '../core/operations/replay.js';
import { screenshotOperation } from '../core/operations/screenshot.js';
import { sessionEnd, sessionStart } from '../core/operations/sessions.js';
import { BrowserService, type ActionLogPage } from '../core/service.js';
import { ServiceError } from '../core/errors.js';
import { libraryExtract, type ExtractRunOptions, type Infer, type LibraryExtractOptions, type ZodSchema } from './extract.js';
import { type PageEvent, type SessionInfo } from '../core/sessions.js';
import { parseInput } from '../core/validation.js';
import { answerForm, LIBRARY_OWNER } from '../door.js';
import { runOperation, type OperationRunOptions } from './result.js';
import type { EndSessionRequest, ProfileInfo, ProfileList, StateRequest, StorageState } from '../core/profiles/index.js';

type OperationOf<N extends OperationName> = Extract<(typeof OPERATIONS)[number], { name: N }>;
/** The input of an operation as the library takes it: its fields, and sessionId for operations on a session. */
export type OperationInput<N extends OperationName> = z.input<OperationOf<N>['input']> & { sessionId?: string };
/** What an operation resolves to (a BinaryResult for operations answering bytes). */
export type OperationResult<N extends OperationName> = Awaited<ReturnType<OperationOf<N>['run']>>['result'];

/** The service interface's navigate answer: `{success, data: {result, actionId}}`. */
export interface NavigateResponse {
  success: true;
  data: { result: NavigationResponse | null; actionId: string };
}

/** The service's configuration, or `service`: a BrowserService to share (e.g. with an HTTP door in the same process). */
export type BrowserSessionsOptions = Partial<ServiceConfig> & { service?: BrowserService };
/** The options of session_start (viewport, device, locale, proxy, blockResources, timeoutMs...). */
export type SessionStartOptions = z.input<typeof sessionStart.input>;

/** The TypeScript library: the same core as the MCP and REST doors, in-process. */
export class BrowserSessions {
  readonly service: BrowserService;

  constructor(options: BrowserSessionsOptions = {}) {
    const { service, ...config } = options;
    checkOperationsDenied(config.operationsDenied);
    this.service = service ?? new BrowserService(config);
    // Live-view links are served by a loopback listener opened on the first one asked for.
    serveLiveOnDemand(this.service);
  }

  /**
   * Starts a session; `options` as session_start takes them (docs/sessions.md), validated the same way. `{storageState}`
   * or `{profile}` (options.profiles set) starts it logged in where that state was (docs/profiles.md).
   */
  async startSession(options: SessionStartOptions = {}): Promise<BrowserSession> {
    const { result } = await runOperation({ service: this.service, operation: sessionStart, input: options });
    return new BrowserSession(this.service, result as SessionInfo);
  }

  /** The named profiles kept under `options.profiles.dir` (docs/profiles.md). */
  readonly profiles = {
    list: async (): Promise<ProfileList> =>
      (await runOperation({ service: this.service, operation: profileList, input: {} })).result as ProfileList,
    delete: async (name: string): Promise<void> => {
      await runOperation({ service: this.service, operation: profileDelete, input: { name } });
    },
  };

  list(): SessionInfo[] {
    return this.service.listSessions(LIBRARY_OWNER);
  }

  /**
   * Any operation of the table by name, its input checked by the same schema as over MCP and REST:
   * `call('navigate', {sessionId, url})`. Resolves to the operation's result; `run.onOutcome` gets its metadata.
   */
  async call<N extends OperationName>(name: N, input: OperationInput<N>, run: OperationRunOptions = {}): Promise<OperationResult<N>> {
    const operation = findOperation(name);
    if (!operation) throw new ServiceError('invalid_argument', `Unknown operation "${String(name)}".`);
    const { result } = await runOperation({ service: this.service, operation, input: input as Record<string, unknown>, run });
    return result as OperationResult<N>;
  }

  /** Ends every session and closes the browser. */
  close(): Promise<void> {
    return this.service.close();
  }
}

export class BrowserSession {
  readonly id: string;
  readonly page: SessionPage;

  constructor(
    private readonly service: BrowserService,
    info: SessionInfo,
  ) {
    this.id = info.id;
    this.page = new SessionPage(service, info.id);
  }

  info(): SessionInfo {
    return this.service.getSession(LIBRARY_OWNER, this.id);
  }

  /** The library's one navigate shape, the interface's: `{success, data: {result, actionId}}`; result is null for same-document navigations. */
  navigate(url: string, options: Omit<NavigateRequest, 'url'> = {}, run: OperationRunOptions = {}): Promise<NavigateResponse> {
    return libraryNavigate({ service: this.service, input: { ...options, url, sessionId: this.id }, run });
  }

  /** Ends the session; `{saveProfile: true}` first saves it to the profile it started from. */
  async end(options: EndSessionRequest = {}): Promise<void> {
    await runOperation({ service: this.service, operation: sessionEnd, input: { ...options, sessionId: this.id } });
  }

  /** The session's storage state now: pass it to startSession({storageState}) to start another session the same way. */
  async state(options: StateRequest = {}, run: OperationRunOptions = {}): Promise<StorageState> {
    const input = { ...options, sessionId: this.id };
    return (await runOperation({ service: this.service, operation: sessionState, input, run })).result as StorageState;
  }

  /** Saves the session's state as a named profile (default: the profile it started from); the last save wins. */
  async saveProfile(name?: string, run: OperationRunOptions = {}): Promise<ProfileInfo> {
    const input = { ...(name === undefined ? {} : { name }), sessionId: this.id };
    return (await runOperation({ service: this.service, operation: profileSave, input, run })).result as ProfileInfo;
  }

  /** A link to watch the session live (and, interactive by default, click and type in it); see docs/live-view.md. */
  liveView(request: LiveViewRequest = {}): Promise<LiveViewResult> {
    return this.service.liveView(LIBRARY_OWNER, this.id, parseInput(LiveViewRequest, request, 'liveView options'));
  }

  /** The Playwright trace so far (a zip for `npx playwright-core show-trace`); `recording_not_enabled` unless started with record. */
  async trace(): Promise<Buffer> {
    const { result } = await runOperation({ service: this.service, operation: sessionTrace, input: { sessionId: this.id } });
    return (result as BinaryResult).bytes;
  }

  /** @deprecated Until 0.3.0: the former name of `trace()`. */
  recording(): Promise<Buffer> {
    return this.trace();
  }

  /** The action log: each operation with its actionId, masked arguments, times, outcome, page events and URL. */
  log(): ActionLogPage {
    return this.service.actionLog(LIBRARY_OWNER, this.id);
  }

  /** The session's navigations and actions as a Playwright script (docs/replay.md), and the runId replay takes. */
  async script(input: Omit<OperationInput<'session_script'>, 'sessionId'> = {}): Promise<OperationResult<'session_script'>> {
    return (await runOperation({ service: this.service, operation: sessionScript, input: { ...input, sessionId: this.id } }))
      .result as OperationResult<'session_script'>;
  }

  /** Does a recorded run again on this session without a model (docs/replay.md): `{runId}`, `{steps}` or `{actionId}`. */
  async replay(input: Omit<OperationInput<'replay'>, 'sessionId'>, run: OperationRunOptions = {}): Promise<OperationResult<'replay'>> {
    return (await runOperation({ service: this.service, operation: replayOperation, input: { ...input, sessionId: this.id }, run }))
      .result as OperationResult<'replay'>;
  }

  /** An agent on this session (2.6); besides the wire form, `tools` with zod schemas and connected MCP `Client`s are allowed. */
  agent(config: AgentConfig = {}): SessionAgent {
    return new SessionAgent(this.service, this.id, config);
  }
}

/** Library-only parts of AgentConfig are checked for shape here; the rest exactly as over MCP and REST. */
const LibraryAgentConfig = AgentConfigWire.extend({
  integrations: z
    .array(
      z.union([
        AgentConfigWire.shape.integrations.unwrap().element,
        z.custom(
          (value) => typeof value === 'object' && value !== null && 'callTool' in value,
          'an MCP URL, {url, headers} or a connected Client',
        ),
      ]),
    )
    .optional(),
  tools: z
    .record(
      z.string(),
      z.custom((value) => typeof value === 'object' && value !== null && 'execute' in value, 'a tool {description, inputSchema, execute}'),
    )
    .optional(),
}).strict();

export interface AgentRunOptions extends OperationRunOptions {
  /** Called after each action. */
  onProgress?: (event: ProgressEvent) => void;
}

export class SessionAgent {
  constructor(
    private readonly service: BrowserService,
    private readonly sessionId: string,
    readonly config: AgentConfig,
  ) {}

  /** `execute(instruction)` or `execute({instruction, maxSteps, autoScreenshot, waitBetweenActions, context, variables})`; snake_case names work too. */
  async execute(instructionOrOptions: string | z.input<typeof AgentExecuteOptions>, run: AgentRunOptions = {}): Promise<AgentResult> {
    const executeOptions = parseInput(AgentExecuteOptions, instructionOrOptions, 'execute options');
    parseInput(LibraryAgentConfig, this.config, 'agent config');
    const outcome = await agentExecuteOperation.run(
      // The library's config may hold live MCP clients as integrations, which no wire schema can describe.
      { agentConfig: this.config as AgentConfigWireType, executeOptions },
      { service: this.service, owner: LIBRARY_OWNER, sessionId: this.sessionId, ctx: { signal: run.signal, progress: run.onProgress } },
    );
    run.onOutcome?.(outcomeMeta(outcome));
    return outcome.result;
  }
}

export class SessionPage {
  constructor(
    private readonly service: BrowserService,
    private readonly sessionId: string,
  ) {}

  /** Shorthand for `(await session.navigate(url, {options})).data.result`: the navigation response, or null. */
  async goto(url: string, options: NavigateRequest['options'] = {}, run: OperationRunOptions = {}): Promise<NavigationResponse | null> {
    return (await libraryNavigate({ service: this.service, input: { url, options, sessionId: this.sessionId }, run })).data.result;
  }

  /** `extract()` -> {pageText}; `extract(instruction)` -> {extraction}; `extract({instruction, schema, ...})` -> the data, typed by a zod schema. */
  extract(): Promise<{ pageText: string }>;
  extract(instruction: string, run?: ExtractRunOptions): Promise<{ extraction: string }>;
  extract<S extends ZodSchema>(options: LibraryExtractOptions<S> & { schema: S }, run?: ExtractRunOptions): Promise<Infer<S>>;
  extract(options: LibraryExtractOptions, run?: ExtractRunOptions): Promise<unknown>;
  extract(options?: string | LibraryExtractOptions, run?: ExtractRunOptions): Promise<unknown> {
    return libraryExtract({ service: this.service, sessionId: this.sessionId, options, run });
  }

  /**
   * `act(instruction)`, `act(observed)` (an observe result or `{ref, method, arguments}`, no model) or
   * `act({action | instruction, variables, timeoutMs, maxTokens, ...})`. Resolves with what the action changed.
   */
  async act(request: string | Action | ActRequest, run: OperationRunOptions = {}): Promise<ActResult & { pageEvents: PageEvent[] }> {
    const given = typeof request === 'string' ? { instruction: request } : request && 'method' in request ? { action: request } : request;
    const outcome = await this.run(actOperation, given, run);
    return { ...(outcome.result as ActResult), pageEvents: outcome.pageEvents };
  }

  /** `observe()`: every element one can act on, no model; `observe(instruction)` or `observe({instruction, selector, iframes, ...})`. */
  async observe(request: string | ObserveRequest = {}, run: OperationRunOptions = {}): Promise<ObserveResult> {
    const given = typeof request === 'string' ? { instruction: request } : request;
    return (await this.run(observeOperation, given, run)).result as ObserveResult;
  }

  /** The image (PNG by default), within the size caps of SCREENSHOT_LIMITS. */
  async screenshot(request: ScreenshotRequest = {}, run: OperationRunOptions = {}): Promise<Buffer> {
    return ((await this.run(screenshotOperation, request, run)).result as BinaryResult).bytes;
  }

  private run(operation: Parameters<typeof runOperation>[0]['operation'], given: unknown, run: OperationRunOptions) {
    // Anything but an object is refused by the schema, with the same message as over MCP and REST.
    const input = typeof given === 'object' && given !== null ? { ...given, sessionId: this.sessionId } : given;
    return runOperation({ service: this.service, operation, input: input as Record<string, unknown>, run });
  }
}

interface NavigateCall {
  service: BrowserService;
  input: Record<string, unknown>;
  run: OperationRunOptions;
}

async function libraryNavigate({ service, input, run }: NavigateCall): Promise<NavigateResponse> {
  const { result, meta } = await runOperation({ service, operation: navigateOperation, input, run });
  return answerForm(navigateOperation).structured(result, meta) as NavigateResponse;
}
