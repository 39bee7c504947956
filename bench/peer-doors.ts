/**
 * The MCP servers `npm run bench tasks` compares: ours, Playwright MCP and chrome-devtools-mcp, each spawned over
 * stdio with the SDK client, and a door per server that counts calls and the o200k tokens of the text each answers.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countTokens } from '../src/core/tokens.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** The browser every server runs here: the system Chromium, headless. */
export const CHROMIUM = '/usr/bin/chromium';

export interface McpServer {
  readonly name: string;
  /** One tool call; isError results are returned, not thrown. */
  call(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CallToolResult>;
  /** Its tools/list, as a client passes it to its model. */
  list(): Promise<Tool[]>;
  close(): Promise<void>;
}

/** What a peer's tool answered, as its client reads it: the text blocks joined, and the first image if any. */
export interface Answer {
  text: string;
  image?: Buffer;
  isError: boolean;
}

/** A client of one peer server: each call counted, with the tokens of the text it answered. */
export interface PeerDoor {
  call(name: string, args?: Record<string, unknown>): Promise<Answer>;
  readonly usage: { calls: number; tokens: number };
}

export function peerDoor(server: McpServer, timeoutMs: number): PeerDoor {
  const usage = { calls: 0, tokens: 0 };
  return {
    usage,
    call: async (name, args = {}) => {
      usage.calls++;
      const result = await server.call(name, args, timeoutMs);
      const text = result.content
        .filter((block) => block.type === 'text')
        .map((block) => (block as { text: string }).text)
        .join('\n');
      usage.tokens += countTokens(text);
      const image = result.content.find((block) => block.type === 'image') as { data: string } | undefined;
      return { text, image: image ? Buffer.from(image.data, 'base64') : undefined, isError: result.isError === true };
    },
  };
}

async function spawn(name: string, args: string[], env: Record<string, string> = {}, cleanup?: () => void): Promise<McpServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: ROOT,
    stderr: 'ignore',
    env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn', ...env },
  });
  const client = new Client({ name: 'bench-tasks', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  return {
    name,
    list: async () => (await client.listTools()).tools,
    call: async (tool, toolArgs, timeoutMs) =>
      (await client.callTool({ name: tool, arguments: toolArgs }, undefined, { timeout: timeoutMs })) as CallToolResult,
    close: async () => {
      await client.close().catch(() => undefined);
      cleanup?.();
    },
  };
}

/** This server over stdio (src/cli.ts through tsx), its own browser discovery. */
export function startOurs(): Promise<McpServer> {
  return spawn('browser-session-mcp', ['--import', 'tsx', 'src/cli.ts']);
}

/**
 * Playwright MCP 0.0.83 as tools.bench.ts starts it (headless, the system Chromium), in memory (--isolated), with the
 * vision capability (browser_mouse_click_xy and friends) and its files (snapshots of actions, screenshots) in a
 * temporary folder rather than the checkout.
 */
export function startPlaywrightMcp(): Promise<McpServer> {
  const cli = join(dirname(createRequire(import.meta.url).resolve('@playwright/mcp')), 'cli.js');
  const out = mkdtempSync(join(tmpdir(), 'bench-playwright-mcp-'));
  const args = [cli, '--headless', '--executable-path', CHROMIUM, '--isolated', '--no-sandbox', '--caps', 'vision', '--output-dir', out];
  return spawn('Playwright MCP', args, {}, () => rmSync(out, { recursive: true, force: true }));
}

/**
 * chrome-devtools-mcp 1.11.0: headless, the system Chromium, a temporary profile (--isolated), coordinate tools
 * (--experimentalVision: click_at), nothing sent out (no usage statistics, no CrUX look-ups).
 */
export function startChromeDevtoolsMcp(): Promise<McpServer> {
  const cli = join(ROOT, 'node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js');
  const args = [
    cli,
    '--headless',
    '--isolated',
    '--executablePath',
    CHROMIUM,
    '--chromeArg=--no-sandbox',
    '--chromeArg=--disable-gpu',
    '--chromeArg=--disable-dev-shm-usage',
    '--no-usage-statistics',
    '--no-performance-crux',
    '--experimentalVision',
  ];
  return spawn('chrome-devtools-mcp', args, { CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' });
}
