import type { Logger } from 'pino';
import type { RemoteLaunchOptions } from './hosts/remote.js';
import type { Egress, EgressPolicyName } from './egress/index.js';
import type { SessionOptionsRules } from './session/options.js';

/** Everything the core needs to run; the CLI and the library build it from flags and options. */
export interface ServiceConfig {
  /** Chromium executable; when unset the browser is discovered (see browser.ts). */
  executablePath?: string;
  /** Connect to a running browser over CDP instead of launching one (one host; same as a one-item cdpEndpoints). */
  cdpEndpoint?: string;
  /** Running browsers reached over CDP; each is one host of the pool (docs/hosts.md). */
  cdpEndpoints?: string[];
  /** Playwright servers (run-server, launchServer, the Playwright image); each is one host of the pool. */
  playwrightEndpoints?: string[];
  /** Launch options sent to Playwright endpoints (x-playwright-launch-options), e.g. executablePath, args. */
  remoteLaunchOptions?: RemoteLaunchOptions;
  /** Most sessions on one browser host; unset: no per-host limit. */
  sessionsPerHost?: number;
  headless: boolean;
  /** Extra Chromium flags appended to the defaults. */
  browserArgs: string[];
  maxSessions: number;
  /** Most sessions one API key (owner) may hold at once; unset means `maxSessions`. */
  maxSessionsPerKey?: number;
  sessionIdleTimeoutMs: number;
  /** Allow file:, data: and javascript: URLs in navigate. */
  allowFileUrls: boolean;
  /** "public" refuses internal addresses for the browser and the server's own requests; unset is "all" (docs/egress.md). */
  egressPolicy?: EgressPolicyName;
  /** HOST[:PORT], IP[:PORT] or CIDR targets opened despite the egress policy. */
  egressAllow?: string[];
  /** Connect and response-header bound of the server's outbound connections (default 15000). */
  outboundTimeoutMs?: number;
  /** Built by BrowserService from the three options above; leave unset. */
  egress?: Egress;
  /** Which session_start options callers may use; unset: all (docs/sessions.md). */
  sessionOptions?: SessionOptionsRules;
  /** Operations (by name, e.g. `evaluate`) turned off on every door: left out of tools/list, `operation_not_allowed` (403). */
  operationsDenied?: readonly string[];
  /** Popups and target=_blank: closed and reported (default), or kept as tabs of the session. */
  popups?: PopupPolicy;
  /** Default model for extract and the agent, e.g. "openai/gpt-4.1-mini". */
  model?: string;
  /** Environment the model keys are read from; defaults to process.env. */
  env: Record<string, string | undefined>;
  logger: Logger;
  /** How long an ended session's recording and action log stay readable (ms); 0 (default): gone at the end. */
  recordingRetentionMs?: number;
  /** Named profiles: where they are kept and the secret they are encrypted under (docs/profiles.md); unset: off. */
  profiles?: ProfilesConfig;
  /** This server instance among several; session ids start with it (`<instanceId>.<random>`) so peers can route them. */
  instanceId?: string;
  /** Live views (docs/live-view.md): link secret, the base URL behind a proxy, how long a person may hold a page. */
  liveView?: LiveViewConfig;
}

export interface LiveViewConfig {
  /** --live-view-secret: HMAC key of the links (shared by instances, kept across restarts); random per process when unset. */
  secret?: string;
  /** --live-view-public-url: the base URL people open, when the server sits behind a proxy. */
  publicUrl?: string;
  /** How long a person's takeover lasts without Done (default 10 min). */
  takeoverTimeoutMs?: number;
  /** How long a takeover asked by `takeover: true` waits for its first viewer before handing the page back (default 60 s). */
  takeoverFirstViewerMs?: number;
  /** How long the agent's ask_human waits for Done (default 10 min). */
  askHumanTimeoutMs?: number;
}

export interface ProfilesConfig {
  /** Directory of the encrypted profile files. */
  dir: string;
  /** The secret the encryption key derives from; unset: `keyFile`. */
  secret?: string;
  /** A generated key (0600), read or created at the first profile operation when no secret is given. */
  keyFile: string;
}

export type PopupPolicy = 'close' | 'tab';

export const DEFAULTS = {
  headless: true,
  maxSessions: 50,
  sessionIdleTimeoutMs: 15 * 60_000,
  navigationTimeoutMs: 30_000,
  domSettleTimeoutMs: 30_000,
} as const;
