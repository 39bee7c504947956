import { z } from 'zod';
import { AgentConfig as AgentConfigWire, AgentExecuteOptions, type AgentConfig, type AgentResult } from '../core/agent/schema.js';
import type { ServiceConfig } from '../core/config.js';
import { Action, ActRequest, ObserveRequest, ScreenshotRequest, type ActResult, type ObserveResult } from '../core/act/index.js';
import type { ProgressEvent } from '../core/operation.js';
import type { NavigateRequest, NavigateResponse, NavigationResponse } from '../core/navigate.js';
import { BrowserService } from '../core/service.js';
import { libraryExtract, type ExtractRunOptions, type Infer, type LibraryExtractOptions, type ZodSchema } from './extract.js';
import type { PageEvent, SessionInfo } from '../core/sessions.js';
import { parseInput } from '../core/validation.js';
import { LIBRARY_OWNER } from '../door.js';
import { settle, type OperationRunOptions } from './result.js';
import {
  EndSessionRequest,
  SaveProfileRequest,
  SessionStart,
  StateRequest,
  type ProfileInfo,
  type ProfileList,
  type StorageState,
} from '../core/state/index.js';

export type BrowserSessionsOptions = Partial<ServiceConfig>;

/** The TypeScript library: the same core as the MCP and REST doors, in-process. */
export class BrowserSessions {
  readonly service: BrowserService;

  constructor(options: BrowserSessionsOptions = {}) {
    this.service = new BrowserService(options);
  }

  /** A new session; `{storageState}` or `{profile}` (options.profiles set) starts it logged in where that state was. */
  async startSession(start: SessionStart = {}): Promise<BrowserSession> {
    const info = await this.service.startSession(LIBRARY_OWNER, parseInput(SessionStart, start, 'session start options'));
    return new BrowserSession(this.service, info);
  }

  /** The named profiles kept under `options.profiles.dir` (docs/profiles.md). */
  readonly profiles = {
    list: (): Promise<ProfileList> => this.service.listProfiles(LIBRARY_OWNER),
    delete: (name: string): Promise<void> => this.service.deleteProfile(LIBRARY_OWNER, name),
  };

  list(): SessionInfo[] {
    return this.service.listSessions(LIBRARY_OWNER);
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
    return libraryNavigate({ service: this.service, sessionId: this.id, req: { url, ...options }, run });
  }

  /** Ends the session; `{saveProfile: true}` first saves it to the profile it started from. */
  end(options: EndSessionRequest = {}): Promise<void> {
    return this.service.endSession(LIBRARY_OWNER, this.id, parseInput(EndSessionRequest, options, 'end options'));
  }

  /** The session's storage state now: pass it to startSession({storageState}) to start another session the same way. */
  async state(options: StateRequest = {}, run: OperationRunOptions = {}): Promise<StorageState> {
    const outcome = await this.service.sessionState(LIBRARY_OWNER, this.id, parseInput(StateRequest, options, 'state options'), {
      signal: run.signal,
    });
    return settle(outcome, run).result;
  }

  /** Saves the session's state as a named profile (default: the profile it started from); the last save wins. */
  async saveProfile(name?: string, run: OperationRunOptions = {}): Promise<ProfileInfo> {
    const request = parseInput(SaveProfileRequest, name === undefined ? {} : { name }, 'profile name');
    return settle(await this.service.saveProfile(LIBRARY_OWNER, this.id, request, { signal: run.signal }), run).result;
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
    const outcome = await this.service.agentExecute(
      LIBRARY_OWNER,
      this.sessionId,
      { agentConfig: this.config, executeOptions },
      { signal: run.signal, progress: run.onProgress },
    );
    return settle(outcome, run).result;
  }
}

export class SessionPage {
  constructor(
    private readonly service: BrowserService,
    private readonly sessionId: string,
  ) {}

  /** Shorthand for `(await session.navigate(url, {options})).data.result`: the navigation response, or null. */
  async goto(url: string, options: NavigateRequest['options'] = {}, run: OperationRunOptions = {}): Promise<NavigationResponse | null> {
    return (await libraryNavigate({ service: this.service, sessionId: this.sessionId, req: { url, options }, run })).data.result;
  }

  /** `extract()` -> {pageText}; `extract(instruction)` -> {extraction}; `extract({instruction, schema, ...})` -> the data, typed by a zod schema. */
  extract(): Promise<{ pageText: string }>;
  extract(instruction: string, run?: ExtractRunOptions): Promise<{ extraction: string }>;
  extract<S extends ZodSchema>(options: LibraryExtractOptions<S> & { schema: S }, run?: ExtractRunOptions): Promise<Infer<S>>;
  extract(options: LibraryExtractOptions, run?: ExtractRunOptions): Promise<unknown>;
  extract(options?: string | LibraryExtractOptions, run?: ExtractRunOptions): Promise<unknown> {
    return libraryExtract({ service: this.service, owner: LIBRARY_OWNER, sessionId: this.sessionId, options, run });
  }

  /**
   * `act(instruction)`, `act(observed)` (an observe result or `{ref, method, arguments}`, no model) or
   * `act({action | instruction, variables, timeoutMs, maxTokens, ...})`. Resolves with what the action changed.
   */
  async act(request: string | Action | ActRequest, run: OperationRunOptions = {}): Promise<ActResult & { pageEvents: PageEvent[] }> {
    const given = typeof request === 'string' ? { instruction: request } : request && 'method' in request ? { action: request } : request;
    const outcome = await this.service.act(LIBRARY_OWNER, this.sessionId, parseInput(ActRequest, given, 'act request'), {
      signal: run.signal,
    });
    return { ...settle(outcome, run).result, pageEvents: outcome.pageEvents };
  }

  /** `observe()`: every element one can act on, no model; `observe(instruction)` or `observe({instruction, selector, iframes, ...})`. */
  async observe(request: string | ObserveRequest = {}, run: OperationRunOptions = {}): Promise<ObserveResult> {
    const given = typeof request === 'string' ? { instruction: request } : request;
    const outcome = await this.service.observe(LIBRARY_OWNER, this.sessionId, parseInput(ObserveRequest, given, 'observe request'), {
      signal: run.signal,
    });
    return settle(outcome, run).result;
  }

  /** The image (PNG by default), within the size caps of SCREENSHOT_LIMITS. */
  async screenshot(request: ScreenshotRequest = {}, run: OperationRunOptions = {}): Promise<Buffer> {
    const outcome = await this.service.screenshot(
      LIBRARY_OWNER,
      this.sessionId,
      parseInput(ScreenshotRequest, request, 'screenshot options'),
      {
        signal: run.signal,
      },
    );
    return settle(outcome, run).result.image;
  }
}

interface NavigateCall {
  service: BrowserService;
  sessionId: string;
  req: NavigateRequest;
  run: OperationRunOptions;
}

async function libraryNavigate({ service, sessionId, req, run }: NavigateCall): Promise<NavigateResponse> {
  const { result, actionId } = settle(await service.navigate(LIBRARY_OWNER, sessionId, req, { signal: run.signal }), run);
  return { success: true, data: { result, actionId } };
}
