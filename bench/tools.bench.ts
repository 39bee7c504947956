/**
 * Tool budget: the o200k tokens of the whole `tools/list` as a client passes it to its model (name, description,
 * input schema per tool), ours and Playwright MCP's, both spawned over stdio and listed with the SDK client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { printTable } from './table.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface ListedTools {
  count: number;
  tokens: number;
  perTool: Array<{ name: string; tokens: number }>;
}

/** Tokens of the tools as a model sees them: each tool's {name, description, input_schema} as JSON. */
export function toolTokens(tools: Array<{ name: string; description?: string; inputSchema: unknown }>): ListedTools {
  const shown = tools.map((tool) => ({ name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema }));
  return {
    count: tools.length,
    tokens: countTokens(JSON.stringify(shown)),
    perTool: shown.map((tool) => ({ name: tool.name, tokens: countTokens(JSON.stringify(tool)) })),
  };
}

/** Spawns an MCP server over stdio, lists its tools and closes it. */
export async function listOverStdio(command: string, args: string[]): Promise<ListedTools> {
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: ROOT,
    stderr: 'ignore',
    env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn' },
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  try {
    return toolTokens((await client.listTools()).tools);
  } finally {
    await client.close();
  }
}

export async function run(): Promise<void> {
  const ours = await listOverStdio(process.execPath, ['--import', 'tsx', 'src/cli.ts']);
  const rows: Array<Array<string | number>> = [['browser-session-mcp (this)', ours.count, ours.tokens, 3000]];
  try {
    // Its package exports no subpaths; the bin file sits beside its entry point.
    const cli = join(dirname(createRequire(import.meta.url).resolve('@playwright/mcp')), 'cli.js');
    const theirs = await listOverStdio(process.execPath, [cli, '--headless', '--executable-path', '/usr/bin/chromium']);
    rows.push(['@playwright/mcp 0.0.83 (default tools)', theirs.count, theirs.tokens, '-']);
  } catch (err) {
    rows.push([`@playwright/mcp: could not run here (${err instanceof Error ? err.message : String(err)})`, '-', '-', '-']);
  }
  printTable('tools/list, o200k tokens (name + description + input schema per tool)', ['Server', 'Tools', 'Tokens', 'Budget'], rows);
  printTable(
    'Our tools, o200k tokens each',
    ['Tool', 'Tokens'],
    ours.perTool.map((tool) => [tool.name, tool.tokens]),
  );
}
