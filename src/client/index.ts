import type { ServiceConfig } from '../core/config.js';
import type { ExtractOptions } from '../core/extract.js';
import type { NavigateRequest, NavigateResponse } from '../core/navigate.js';
import { BrowserService } from '../core/service.js';
import type { SessionInfo } from '../core/sessions.js';

/** Owner of sessions opened through the library. */
const LIBRARY_OWNER = 'library';

export type BrowserSessionsOptions = Partial<ServiceConfig>;

/** The TypeScript library: the same core as the MCP and REST doors, in-process. */
export class BrowserSessions {
  readonly service: BrowserService;

  constructor(options: BrowserSessionsOptions = {}) {
    this.service = new BrowserService(options);
  }

  async startSession(): Promise<BrowserSession> {
    const info = await this.service.startSession(LIBRARY_OWNER);
    return new BrowserSession(this.service, info);
  }

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

  async navigate(url: string, options: Omit<NavigateRequest, 'url'> = {}): Promise<NavigateResponse> {
    return (await this.service.navigate(LIBRARY_OWNER, this.id, { url, ...options })).result;
  }

  end(): Promise<void> {
    return this.service.endSession(LIBRARY_OWNER, this.id);
  }
}

export class SessionPage {
  constructor(
    private readonly service: BrowserService,
    private readonly sessionId: string,
  ) {}

  async goto(url: string, options: NavigateRequest['options'] = {}): Promise<NavigateResponse['data']['result']> {
    return (await this.service.navigate(LIBRARY_OWNER, this.sessionId, { url, options })).result.data.result;
  }

  /** `extract()` -> {pageText}; `extract(instruction)` -> {extraction}; `extract({instruction, schema, ...})` -> an object valid against the schema. */
  async extract(options?: string | ExtractOptions): Promise<Record<string, unknown>> {
    const normalized: ExtractOptions = typeof options === 'string' ? { instruction: options } : (options ?? {});
    return (await this.service.extract(LIBRARY_OWNER, this.sessionId, normalized)).result.result;
  }
}
