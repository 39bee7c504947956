#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { findBrowserExecutable, HOW_TO_GET_A_BROWSER } from './core/browser.js';
import { DEFAULTS } from './core/config.js';
import { createLogger } from './core/logger.js';
import { BrowserService } from './core/service.js';
import { serveStdio } from './mcp/stdio.js';
import { VERSION } from './version.js';

function positiveInt(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a whole number');
  return parsed;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
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
  .option('--port <n>', 'HTTP port (0 picks a free one)', positiveInt, 8931)
  .option('--host <host>', 'HTTP bind address', '127.0.0.1')
  .option('--api-key <key>', 'API key accepted over HTTP (repeatable; or SVC_API_KEYS=a,b)', collect, [])
  // Keys from the environment add to those of --api-key (an env() option alone would be replaced by them).
  .addOption(new Option('--api-keys <list>', 'comma-separated API keys').env('SVC_API_KEYS').hideHelp())
  .option('--allowed-hosts <hosts>', 'comma-separated Host header values accepted over HTTP besides localhost')
  .option('--executable-path <path>', 'Chromium/Chrome executable (or BROWSER_EXECUTABLE_PATH)')
  .option('--cdp-endpoint <url>', 'connect to a running browser over CDP instead of launching one')
  .option('--headed', 'show the browser window', false)
  .option('--browser-arg <flag>', 'extra Chromium flag (repeatable)', collect, [])
  .option('--max-sessions <n>', 'most sessions open at once', positiveInt, DEFAULTS.maxSessions)
  .option('--max-sessions-per-key <n>', 'most sessions one API key may hold at once (default: --max-sessions)', positiveInt)
  .option('--session-idle-timeout <ms>', 'end a session after this long unused', positiveInt, DEFAULTS.sessionIdleTimeoutMs)
  .option('--max-mcp-sessions <n>', 'most MCP sessions open at /mcp at once (default 1000)', positiveInt)
  .option('--max-mcp-sessions-per-key <n>', 'most MCP sessions one API key may hold at /mcp (default 100)', positiveInt)
  .option('--mcp-session-idle-timeout <ms>', 'close an MCP session at /mcp after this long unused (default 300000)', positiveInt)
  .option('--allow-file-urls', 'allow file:, data: and javascript: URLs in navigate', false)
  .addOption(new Option('--model <name>', 'default model for extract and the agent, e.g. openai/gpt-4.1-mini').env('MODEL_NAME'))
  .option('--check-browser', 'print which browser would be used, then exit (1 when none is found)', false)
  .addOption(new Option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent').env('LOG_LEVEL').default('info'));

interface CliOptions {
  transport: 'stdio' | 'http';
  port: number;
  host: string;
  apiKey: string[];
  apiKeys?: string;
  allowedHosts?: string;
  executablePath?: string;
  cdpEndpoint?: string;
  headed: boolean;
  browserArg: string[];
  maxSessions: number;
  maxSessionsPerKey?: number;
  sessionIdleTimeout: number;
  maxMcpSessions?: number;
  maxMcpSessionsPerKey?: number;
  mcpSessionIdleTimeout?: number;
  allowFileUrls: boolean;
  model?: string;
  logLevel: string;
  checkBrowser: boolean;
}

async function main(): Promise<void> {
  const opts = program.parse().opts<CliOptions>();
  const logger = createLogger(opts.logLevel);

  // Fail at start, not at the first session, when no browser can be had.
  const found = opts.cdpEndpoint ? undefined : findBrowserExecutable(opts.executablePath);
  if (!opts.cdpEndpoint && !found) {
    process.stderr.write(`browser-session-mcp: ${HOW_TO_GET_A_BROWSER}\n`);
    process.exit(1);
  }
  if (opts.checkBrowser) {
    process.stdout.write(opts.cdpEndpoint ? `cdp ${opts.cdpEndpoint}\n` : `${found!.source} ${found!.path}\n`);
    process.exit(0);
  }

  const service = new BrowserService({
    executablePath: opts.executablePath,
    cdpEndpoint: opts.cdpEndpoint,
    headless: !opts.headed,
    browserArgs: opts.browserArg,
    maxSessions: opts.maxSessions,
    maxSessionsPerKey: opts.maxSessionsPerKey,
    sessionIdleTimeoutMs: opts.sessionIdleTimeout,
    allowFileUrls: opts.allowFileUrls,
    model: opts.model,
    logger,
  });

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
    await serveStdio(service, { onClose: () => void shutdown('stdin closed') });
    return;
  }
  const { serveHttp } = await import('./http/server.js');
  running.http = await serveHttp(service, {
    port: opts.port,
    host: opts.host,
    apiKeys: [...opts.apiKey, ...(opts.apiKeys ?? '').split(',')].map((key) => key.trim()).filter(Boolean),
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

void main();
