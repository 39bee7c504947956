/**
 * A control port for playing the model by hand (a person, or an assistant that is the real model under test): one
 * long-lived MCP client of one server (ours, Playwright MCP or chrome-devtools-mcp, as bench/peer-doors.ts starts
 * them), driven call by call over loopback HTTP. Every call and the o200k tokens of what it answered are counted, so
 * a real model's success, calls and tokens can be compared between servers on the same tasks.
 *
 *   npx tsx bench/model-port.ts --server ours|playwright|devtools --port 7801 [--images DIR]
 *   curl -s 127.0.0.1:7801/tools                      # the tools/list a client's model is shown (counted once)
 *   curl -s 127.0.0.1:7801/call -d '{"name":"navigate","arguments":{...}}'   # the text the model reads
 *   curl -s 127.0.0.1:7801/usage                      # {calls, tokens, images, toolsTokens}
 *   curl -s -X POST 127.0.0.1:7801/stop
 *
 * An image a tool answers is written to the images folder and its path printed in its place.
 */
import { createServer } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { countTokens } from '../src/core/tokens.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const require = createRequire(import.meta.url);
/** The command lines, as bench/peer-doors.ts runs each server. */
const SERVERS: Record<string, string[]> = {
  ours: ['--import', 'tsx', 'src/cli.ts'],
  playwright: [
    join(dirname(require.resolve('@playwright/mcp')), 'cli.js'),
    '--headless',
    '--executable-path',
    CHROMIUM,
    '--isolated',
    '--no-sandbox',
    '--caps',
    'vision',
    '--output-dir',
    '/tmp/model-port-playwright',
  ],
  devtools: [
    join(ROOT, 'node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js'),
    '--headless',
    '--isolated',
    '--executablePath',
    CHROMIUM,
    '--chromeArg=--no-sandbox',
    '--chromeArg=--disable-gpu',
    '--no-usage-statistics',
    '--no-performance-crux',
    '--experimentalVision',
  ],
};

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'ours' },
    port: { type: 'string', default: '7801' },
    images: { type: 'string', default: '/tmp/model-port-images' },
  },
});
const command = SERVERS[values.server!];
if (!command) throw new Error(`--server is one of ${Object.keys(SERVERS).join(', ')}`);
mkdirSync(values.images!, { recursive: true });

const client = new Client({ name: 'model-port', version: '1.0.0' });
await client.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: command,
    cwd: ROOT,
    stderr: 'ignore',
    env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1' },
  }),
  { timeout: 120_000 },
);
const usage = { calls: 0, tokens: 0, images: 0, toolsTokens: 0 };
const CALL_TIMEOUT_MS = 120_000;

const http = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    void (async () => {
      const path = req.url ?? '/';
      if (path === '/usage') return res.end(`${JSON.stringify(usage)}\n`);
      if (path === '/stop') {
        res.end('stopping\n');
        await client.close();
        http.close();
        return;
      }
      if (path === '/tools') {
        const listed = (await client.listTools()).tools;
        const shown = JSON.stringify(listed.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
        usage.toolsTokens = countTokens(shown);
        return res.end(`${shown}\n`);
      }
      if (path !== '/call') return res.writeHead(404).end('GET /tools, POST /call {name, arguments}, GET /usage, POST /stop\n');
      const { name, arguments: args = {} } = JSON.parse(body || '{}') as { name: string; arguments?: Record<string, unknown> };
      usage.calls++;
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT_MS })) as CallToolResult;
      const parts: string[] = [];
      for (const block of result.content) {
        if (block.type === 'text') parts.push(block.text);
        else if (block.type === 'image') {
          const file = join(values.images!, `image-${++usage.images}.png`);
          writeFileSync(file, Buffer.from(block.data, 'base64'));
          parts.push(`[image: ${file}]`);
        }
      }
      const text = `${result.isError ? 'isError: ' : ''}${parts.join('\n')}`;
      usage.tokens += countTokens(parts.filter((part) => !part.startsWith('[image: ')).join('\n'));
      res.end(`${text}\n`);
    })().catch((err: unknown) => res.writeHead(500).end(`${String(err)}\n`));
  });
});
http.listen(Number(values.port), '127.0.0.1', () => console.log(`${values.server} on http://127.0.0.1:${values.port}`));
