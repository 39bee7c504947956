import type { Logger } from 'pino';

/** Everything the core needs to run; the CLI and the library build it from flags and options. */
export interface ServiceConfig {
  /** Chromium executable; when unset the browser is discovered (see browser.ts). */
  executablePath?: string;
  /** Connect to a running browser over CDP instead of launching one. */
  cdpEndpoint?: string;
  headless: boolean;
  /** Extra Chromium flags appended to the defaults. */
  browserArgs: string[];
  maxSessions: number;
  /** Most sessions one API key (owner) may hold at once; unset means `maxSessions`. */
  maxSessionsPerKey?: number;
  sessionIdleTimeoutMs: number;
  /** Allow file:, data: and javascript: URLs in navigate. */
  allowFileUrls: boolean;
  /** Default model for extract and the agent, e.g. "openai/gpt-4.1-mini". */
  model?: string;
  /** Environment the model keys are read from; defaults to process.env. */
  env: Record<string, string | undefined>;
  logger: Logger;
}

export const DEFAULTS = {
  headless: true,
  maxSessions: 50,
  sessionIdleTimeoutMs: 15 * 60_000,
  navigationTimeoutMs: 30_000,
  domSettleTimeoutMs: 30_000,
} as const;
