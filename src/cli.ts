#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { describeSource, findBrowserExecutable, noBrowserFound, type BrowserDiscovery } from './core/browser.js';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DEFAULTS, type ProfilesConfig } from './core/config.js';
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from './core/egress/index.js';
import { firstLine } from './core/hosts/host.js';
import { launchLocal } from './core/hosts/local.js';
import { checkEndpoint, publicEndpoint, type RemoteLaunchOptions } from './core/hosts/remote.js';
import { LIVE_DEFAULTS } from './core/live/index.js';
import { createLogger, silentLogger } from './core/logger.js';
import { checkOperationsDenied } from './core/operations/index.js';
import { BrowserService } from './core/service.js';
import { MCP_SESSION_DEFAULTS } from './http/mcp-limits.js';
import { serveStdio } from './mcp/stdio.js';
import { VERSION } from './version.js';

function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a whole number');
  return parsed;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function atLeastOne(value: string): number {
  const parsed = positiveInt(value);
  if (parsed < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return parsed;
}

function endpoint(flag: string, schemes: string[]) {
  return (value: string, previous: string[]): string[] => {
    try {
      return [...previous, checkEndpoint(value, flag, schemes)];
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
}

function launchOptionsJson(value: string): RemoteLaunchOptions {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object, e.g. {"executablePath":"/usr/bin/chromium"}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object');
  const args = (parsed as { args?: unknown }).args;
  if (args !== undefined && !(Array.isArray(args) && args.every((arg) => typeof arg === 'string'))) {
    throw new InvalidArgumentError('"args" must be an array of strings');
  }
  return parsed as RemoteLaunchOptions;
}

const program = new Command()
  .name('browser-session-mcp')
  .description('Isolated real-browser sessions for AI clients, over MCP (stdio or streamable HTTP) and a REST API.')
  .version(VERSION)
  .addOption(
    new Option('--transport <kind>', 'stdio (MCP over stdin/stdout) or http (MCP at /mcp and the REST API at /v1)')
      .choices(['stdio', 'http'])
      .default('stdio'),
  )
  .addOption(new Option('--port <n>', 'HTTP port (0 picks a free one)').env('PORT').argParser(positiveInt).default(8931))
  .option('--host <host>', 'HTTP bind address', '127.0.0.1')
  .option('--api-key <key>', 'API key accepted over HTTP (repeatable; or SVC_API_KEYS=a,b)', collect, [])
  // Keys from the environment add to those of --api-key (an env() option alone would be replaced by them).
  .addOption(new Option('--api-keys <list>', 'comma-separated API keys').env('SVC_API_KEYS').hideHelp())
  .option('--allowed-hosts <hosts>', 'comma-separated Host header values accepted over HTTP besides localhost')
  .addOption(
    new Option('--oauth-issuer <url>', 'accept OAuth access tokens (JWTs) from this authorization server at /mcp and /v1').env(
      'SVC_OAUTH_ISSUER',
    ),
  )
  .addOption(
    new Option('--oauth-audience <aud>', "the aud tokens must carry (default: the resource, --public-url's /mcp)").env(
      'SVC_OAUTH_AUDIENCE',
    ),
  )
  .addOption(
    new Option('--oauth-owner-claim <name>', "the token claim whose value scopes a caller's sessions")
      .env('SVC_OAUTH_OWNER_CLAIM')
      .default('sub'),
  )
  .addOption(
    new Option('--oauth-scopes <list>', 'comma-separated scopes every token must carry, advertised in the metadata')
      .env('SVC_OAUTH_SCOPES')
      .argParser(list),
  )
  .addOption(
    new Option(
      '--public-url <url>',
      'the origin clients reach this server at (behind a proxy): the OAuth resource and the live-view base',
    ).env('SVC_PUBLIC_URL'),
  )
  .option('--executable-path <path>', 'Chromium/Chrome executable (or BROWSER_EXECUTABLE_PATH)')
  .option(
    '--cdp-endpoint <url>',
    'a running browser reached over CDP, as a browser host (repeatable)',
    endpoint('--cdp-endpoint', ['http:', 'https:', 'ws:', 'wss:']),
    [],
  )
  .option(
    '--playwright-endpoint <url>',
    'a Playwright server (run-server) as a browser host (repeatable)',
    endpoint('--playwright-endpoint', ['ws:', 'wss:', 'http:', 'https:']),
    [],
  )
  .option(
    '--remote-launch-options <json>',
    'launch options sent to Playwright endpoints, e.g. {"executablePath":"/usr/bin/chromium"}',
    launchOptionsJson,
  )
  .option('--sessions-per-host <n>', 'most sessions on one browser host (default: no per-host limit)', atLeastOne)
  .option('--headed', 'show the browser window (or BROWSER_HEADED=true)', false)
  .option('--browser-arg <flag>', 'extra Chromium flag (repeatable)', collect, [])
  .option('--max-sessions <n>', 'most sessions open at once', positiveInt, DEFAULTS.maxSessions)
  .option('--max-sessions-per-key <n>', 'most sessions one API key may hold at once (default: --max-sessions)', positiveInt)
  .option('--session-idle-timeout <ms>', 'end a session after this long unused', positiveInt, DEFAULTS.sessionIdleTimeoutMs)
  .option('--max-mcp-sessions <n>', `most MCP sessions open at /mcp at once (default ${MCP_SESSION_DEFAULTS.maxSessions})`, positiveInt)
  .option(
    '--max-mcp-sessions-per-key <n>',
    `most MCP sessions one API key may hold at /mcp (default ${MCP_SESSION_DEFAULTS.maxSessionsPerKey})`,
    positiveInt,
  )
  .option(
    '--mcp-session-idle-timeout <ms>',
    `close an MCP session at /mcp after this long unused (default ${MCP_SESSION_DEFAULTS.idleTimeoutMs})`,
    positiveInt,
  )
  .option(
    '--recording-retention <ms>',
    "keep an ended session's recording and action log this long (default 0: gone at the end)",
    positiveInt,
    0,
  )
  .option('--allow-file-urls', 'allow file:, data: and javascript: URLs in navigate', false)
  .addOption(
    new Option(
      '--egress-policy <policy>',
      'public: the browser and the server connect to public addresses only; all: anywhere (default: public over HTTP with API keys or off loopback, else all)',
    )
      .choices(['public', 'all'])
      .env('SVC_EGRESS_POLICY'),
  )
  .option('--egress-allow <target>', 'HOST[:PORT], IP[:PORT] or CIDR opened despite --egress-policy public (repeatable)', collect, [])
  .option(
    '--outbound-timeout <ms>',
    "connect and response-header bound of the server's own outbound requests",
    positiveInt,
    DEFAULT_OUTBOUND_TIMEOUT_MS,
  )
  .option('--session-options-allowed <names>', 'comma-separated session_start options callers may use (default: all)', list)
  .option(
    '--session-options-denied <names>',
    'comma-separated session_start options callers may not use, e.g. proxy,javaScriptEnabled',
    list,
  )
  .option('--operations-denied <names>', 'comma-separated operations turned off on every door, e.g. evaluate,agent_execute', list)
  .addOption(
    new Option('--popups <policy>', 'popups and target=_blank: close (closed and reported) or tab (kept as tabs)')
      .choices(['close', 'tab'])
      .default('close'),
  )
  .addOption(new Option('--model <name>', 'default model for extract and the agent, e.g. openai/gpt-4.1-mini').env('MODEL_NAME'))
  .addOption(
    new Option(
      '--profile-dir <dir>',
      'where named profiles are kept, encrypted (default: stdio $XDG_DATA_HOME/browser-session-mcp/profiles; http: off)',
    ).env('SVC_PROFILE_DIR'),
  )
  .addOption(
    new Option('--profile-secret <secret>', 'secret the profile encryption key derives from (prefer the env variable)').env(
      'SVC_PROFILE_SECRET',
    ),
  )
  .option(
    '--profile-key-file <path>',
    'generated key used when no secret is given (default $XDG_CONFIG_HOME/browser-session-mcp/profile.key)',
  )
  .option('--instance-id <id>', 'this server among several: session ids start with it so peers route them here')
  .option('--peer <id=url>', 'another server instance, e.g. b=http://10.0.0.8:8931 (repeatable; needs --instance-id)', collect, [])
  .option('--peers-from-dns <name[:port]>', 'peers are the addresses of this DNS name (a Kubernetes headless Service)')
  .addOption(new Option('--live-view-secret <secret>', 'HMAC key of live-view links (default: random per start)').env('LIVE_VIEW_SECRET'))
  .option('--live-view-public-url <url>', 'base URL people open live views at, when the server is behind a proxy')
  .option('--live-view-host <host>', 'stdio mode: address of the live-view listener', '127.0.0.1')
  .option('--live-view-port <n>', 'stdio mode: port of the live-view listener (default: a free one)', positiveInt, 0)
  .option(
    '--ask-human-timeout <ms>',
    "how long the agent's ask_human waits for a person to press Done",
    positiveInt,
    LIVE_DEFAULTS.askHumanTimeoutMs,
  )
  .option('--check-browser', 'start the browser that would be used, print it and its version, then exit (1 when it does not start)', false)
  .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent').env('LOG_LEVEL').default('info'));

interface CliOptions {
  transport: 'stdio' | 'http';
  port: number;
  host: string;
  apiKey: string[];
  apiKeys?: string;
  allowedHosts?: string;
  oauthIssuer?: string;
  oauthAudience?: string;
  oauthOwnerClaim: string;
  oauthScopes?: string[];
  publicUrl?: string;
  executablePath?: string;
  cdpEndpoint: string[];
  playwrightEndpoint: string[];
  remoteLaunchOptions?: RemoteLaunchOptions;
  sessionsPerHost?: number;
  headed: boolean;
  browserArg: string[];
  maxSessions: number;
  maxSessionsPerKey?: number;
  recordingRetention: number;
  sessionIdleTimeout: number;
  maxMcpSessions?: number;
  maxMcpSessionsPerKey?: number;
  mcpSessionIdleTimeout?: number;
  allowFileUrls: boolean;
  egressPolicy?: 'public' | 'all';
  egressAllow: string[];
  outboundTimeout: number;
  popups: 'close' | 'tab';
  sessionOptionsAllowed?: string[];
  sessionOptionsDenied?: string[];
  operationsDenied?: string[];
  model?: string;
  logLevel: string;
  checkBrowser: boolean;
  instanceId?: string;
  peer: string[];
  peersFromDns?: string;
  liveViewSecret?: string;
  liveViewPublicUrl?: string;
  liveViewHost: string;
  liveViewPort: number;
  askHumanTimeout: number;
  profileDir?: string;
  profileSecret?: string;
  profileKeyFile?: string;
}

program
  .command('install-browser')
  .description("download Playwright's Chromium (and its headless shell) for this version, into Playwright's browser cache")
  .option('--with-deps', "also install the system libraries Chromium needs (Linux, as root: Playwright's --with-deps)", false)
  .action(async (options: { withDeps: boolean }) => {
    const { installBrowser } = await import('./install-browser.js');
    process.exit(await installBrowser(options));
  });

program.action(async () => main(program.opts<CliOptions>()));

// An empty variable is an unset one: a desktop bundle fills the fields a person left empty with "".
for (const option of program.options) if (option.envVar && process.env[option.envVar] === '') delete process.env[option.envVar];

async function main(opts: CliOptions): Promise<void> {
  const logger = createLogger(opts.logLevel);
  // Not commander's env(): a boolean flag would be turned on by any value, "false" included.
  opts.headed ||= /^(1|true|yes)$/i.test(process.env.BROWSER_HEADED ?? '');

  const remote = opts.cdpEndpoint.length + opts.playwrightEndpoint.length > 0;
  const found = remote ? undefined : findBrowserExecutable(opts.executablePath, process.env, !opts.headed);
  if (opts.checkBrowser) {
    const hosts = [
      ...opts.playwrightEndpoint.map((url) => `playwright ${publicEndpoint(url)}`),
      ...opts.cdpEndpoint.map((url) => `cdp ${publicEndpoint(url)}`),
    ];
    if (remote) {
      process.stdout.write(`${hosts.join('\n')}\n`);
      process.exit(0);
    }
    if (!found) fail(noBrowserFound());
    await checkLocalBrowser(found, opts);
  }
  // Without a browser the server still starts: session_start answers how to get one, and works once there is one.
  if (!remote && !found) process.stderr.write(`browser-session-mcp: ${noBrowserFound()}\n`);

  if ((opts.peer.length || opts.peersFromDns) && !opts.instanceId) fail('--peer and --peers-from-dns need --instance-id.');
  if (opts.instanceId && opts.transport !== 'http') fail('--instance-id works with --transport http only.');
  if ((opts.oauthAudience || opts.oauthScopes || opts.oauthOwnerClaim !== 'sub') && !opts.oauthIssuer)
    fail('--oauth-audience, --oauth-owner-claim and --oauth-scopes need --oauth-issuer.');
  if ((opts.oauthIssuer || opts.publicUrl) && opts.transport !== 'http')
    fail('--oauth-issuer and --public-url work with --transport http only.');

  let service: BrowserService;
  try {
    service = createService(opts, logger);
  } catch (err) {
    process.stderr.write(`browser-session-mcp: ${(err as Error).message}\n`);
    process.exit(2);
  }

  const running: { http?: { shutdown(): Promise<void> } | void } = {};
  let stopping = false;
  const shutdown = async (why: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'shutting down');
    const force = setTimeout(() => process.exit(code), 15_000);
    force.unref();
    // Operations in flight answer a clear error before their sessions and the browser close.
    await running.http?.shutdown().catch((err) => logger.error({ err }, 'stopping the HTTP server failed'));
    await service.close().catch((err) => logger.error({ err }, 'shutdown failed'));
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    void shutdown('uncaughtException', 1);
  });
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));

  if (opts.transport === 'stdio') {
    try {
      // Refuse at start, not at every session_start, a policy the browser hosts cannot follow.
      service.egress.checkBrowserReach();
    } catch (err) {
      process.stderr.write(`browser-session-mcp: ${(err as Error).message}\n`);
      process.exit(2);
    }
    const { serveLiveOnDemand } = await import('./live/server.js');
    serveLiveOnDemand(service, { host: opts.liveViewHost, port: opts.liveViewPort });
    await serveStdio(service, { onClose: () => void shutdown('stdin closed') });
    return;
  }
  const { serveHttp } = await import('./http/server.js');
  const peers = opts.instanceId ? await peerTable(opts, logger) : undefined;
  running.http = await serveHttp(service, {
    peers,
    port: opts.port,
    host: opts.host,
    apiKeys: [...opts.apiKey, ...(opts.apiKeys ?? '').split(',')].map((key) => key.trim()).filter(Boolean),
    oauth: opts.oauthIssuer
      ? { issuer: opts.oauthIssuer, audience: opts.oauthAudience, ownerClaim: opts.oauthOwnerClaim, scopes: opts.oauthScopes }
      : undefined,
    publicUrl: opts.publicUrl,
    allowedHosts:
      opts.allowedHosts
        ?.split(',')
        .map((host) => host.trim())
        .filter(Boolean) ?? [],
    mcpSessions: {
      maxSessions: opts.maxMcpSessions,
      maxSessionsPerKey: opts.maxMcpSessionsPerKey,
      idleTimeoutMs: opts.mcpSessionIdleTimeout,
    },
  }).catch((err: Error) => {
    process.stderr.write(`browser-session-mcp: ${err.message}\n`);
    return shutdown('http server failed to start', 1);
  });
}

function createService(opts: CliOptions, logger: ReturnType<typeof createLogger>): BrowserService {
  checkOperationsDenied(opts.operationsDenied);
  return new BrowserService({
    instanceId: opts.instanceId,
    executablePath: opts.executablePath,
    cdpEndpoints: opts.cdpEndpoint,
    playwrightEndpoints: opts.playwrightEndpoint,
    remoteLaunchOptions: opts.remoteLaunchOptions,
    sessionsPerHost: opts.sessionsPerHost,
    headless: !opts.headed,
    browserArgs: opts.browserArg,
    maxSessions: opts.maxSessions,
    maxSessionsPerKey: opts.maxSessionsPerKey,
    sessionIdleTimeoutMs: opts.sessionIdleTimeout,
    recordingRetentionMs: opts.recordingRetention,
    allowFileUrls: opts.allowFileUrls,
    egressPolicy: opts.egressPolicy,
    egressAllow: opts.egressAllow,
    outboundTimeoutMs: opts.outboundTimeout,
    popups: opts.popups,
    sessionOptions:
      opts.sessionOptionsAllowed || opts.sessionOptionsDenied
        ? { allowed: opts.sessionOptionsAllowed, denied: opts.sessionOptionsDenied }
        : undefined,
    operationsDenied: opts.operationsDenied,
    model: opts.model,
    liveView: {
      secret: opts.liveViewSecret,
      // Over HTTP the live view is served by this same server, so its public URL is the server's.
      publicUrl: opts.liveViewPublicUrl ?? opts.publicUrl,
      askHumanTimeoutMs: opts.askHumanTimeout,
    },
    profiles: profilesConfig(opts),
    logger,
  });
}

/** Profiles are on by default for the one local user of stdio, and only when a directory is given over HTTP. */
function profilesConfig(opts: CliOptions): ProfilesConfig | undefined {
  const dir = opts.profileDir ?? (opts.transport === 'stdio' ? join(xdgDir('XDG_DATA_HOME', '.local/share'), 'profiles') : undefined);
  if (!dir) return undefined;
  if (opts.profileSecret !== undefined && opts.profileSecret.length < 16)
    throw new Error('--profile-secret (SVC_PROFILE_SECRET) must be at least 16 characters; use a long random one.');
  return {
    dir: resolve(dir),
    secret: opts.profileSecret,
    keyFile: resolve(opts.profileKeyFile ?? join(xdgDir('XDG_CONFIG_HOME', '.config'), 'profile.key')),
  };
}

function xdgDir(variable: string, fallback: string): string {
  const base = process.env[variable];
  return join(base && isAbsolute(base) ? base : join(homedir(), fallback), 'browser-session-mcp');
}

/** --check-browser: launches the browser that would be used and prints it with its version; exit 1 when it does not start. */
async function checkLocalBrowser(found: BrowserDiscovery, opts: CliOptions): Promise<never> {
  try {
    const browser = await launchLocal({
      executablePath: found.path,
      headless: !opts.headed,
      browserArgs: opts.browserArg,
      env: process.env,
      logger: silentLogger(),
    });
    const version = browser.version();
    await browser.close();
    process.stdout.write(`${found.source} ${found.path} (Chromium ${version})\n`);
    process.exit(0);
  } catch (err) {
    fail(`the browser ${found.path} (${describeSource(found.source)}) does not start: ${firstLine((err as Error).cause ?? err)}`);
  }
}

function fail(message: string): never {
  process.stderr.write(`browser-session-mcp: ${message}\n`);
  process.exit(1);
}

/** The instances this one routes to, from --peer and --peers-from-dns. */
async function peerTable(opts: CliOptions, logger: ReturnType<typeof createLogger>) {
  const { Peers, parsePeerFlag } = await import('./http/peers.js');
  const { parseDnsFlag, watchDnsPeers } = await import('./http/peer-dns.js');
  try {
    const peers = new Peers(opts.instanceId!, opts.peer.map(parsePeerFlag));
    if (opts.peersFromDns) watchDnsPeers(peers, { ...parseDnsFlag(opts.peersFromDns, opts.port), logger });
    return peers;
  } catch (err) {
    return fail((err as Error).message);
  }
}

void program.parseAsync();
