/**
 * A control port for playing the model by hand (a person, or an assistant that is the real model under test): one
 * long-lived MCP client of one server (ours, Playwright MCP or chrome-devtools-mcp, as bench/peer-doors.ts starts
 * them), driven call by call over loopback HTTP. Every call and the o200k tokens of what it answered are counted, so
 * a real model's success, calls and tokens can be compared between servers on the same tasks.
 *
 *   npx tsx bench/model-port.ts --server ours|playwright|devtools --port 7801 [--images DIR] [--log FILE.jsonl]
 *   curl -s 127.0.0.1:7801/tools                      # the tools/list a client's model is shown (counted once)
 *   curl -s 127.0.0.1:7801/call -d '{"name":"navigate","arguments":{...}}'   # the text the model reads
 *   curl -s 127.0.0.1:7801/usage                      # {calls, tokens, images, toolsTokens}
 *   curl -s -X POST 127.0.0.1:7801/stop
 *
 * An image a tool answers is written to the images folder and its path printed in its place; each call, with the
 * tokens of its answer, is appended to the log.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { countTokens } from '../src/core/tokens.js';
import { startChromeDevtoolsMcp, startOurs, startPlaywrightMcp, type McpServer } from './peer-doors.js';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'ours' },
    port: { type: 'string', default: '7801' },
    images: { type: 'string', default: '/tmp/model-port-images' },
    log: { type: 'string', default: '/tmp/model-port-calls.jsonl' },
  },
});
const starters: Record<string, () => Promise<McpServer>> = {
  ours: startOurs,
  playwright: startPlaywrightMcp,
  devtools: startChromeDevtoolsMcp,
};
const start = starters[values.server!];
if (!start) throw new Error(`--server is one of ${Object.keys(starters).join(', ')}`);
mkdirSync(values.images!, { recursive: true });
const server = await start();
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
        await server.close();
        http.close();
        return;
      }
      if (path === '/tools') {
        const listed = await server.list();
        const shown = JSON.stringify(listed.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
        usage.toolsTokens = countTokens(shown);
        return res.end(`${shown}\n`);
      }
      if (path !== '/call') return res.writeHead(404).end('GET /tools, POST /call {name, arguments}, GET /usage, POST /stop\n');
      const { name, arguments: args = {} } = JSON.parse(body || '{}') as { name: string; arguments?: Record<string, unknown> };
      usage.calls++;
      const result = await server.call(name, args, CALL_TIMEOUT_MS);
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
      const tokens = countTokens(parts.filter((part) => !part.startsWith('[image: ')).join('\n'));
      usage.tokens += tokens;
      appendFileSync(values.log!, `${JSON.stringify({ name, arguments: args, tokens, isError: result.isError === true })}\n`);
      res.end(`${text}\n`);
    })().catch((err: unknown) => res.writeHead(500).end(`${String(err)}\n`));
  });
});
http.listen(Number(values.port), '127.0.0.1', () => console.log(`${values.server} on http://127.0.0.1:${values.port}`));
