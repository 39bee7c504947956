/**
 * MCP flood benchmark (issue 17, point 4): one API key sends 1,200 initializes to /mcp (20 at a time) while another
 * key, holding one MCP session, keeps calling session_list. Prints that key's call latency before, during and after
 * the flood, what the flood got (opened, 429), and the server's heap and RSS before the flood, with every MCP
 * session open, and after they are all deleted (DELETE /mcp), after a full garbage collection each time.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { serveHttp } from '../src/http/server.js';
import { median, percentile, printTable } from './table.js';

const FLOOD = Number(process.env.BENCH_FLOOD ?? 1_200);
const IN_FLIGHT = 20;
const CALLS = 100;
const KEYS = ['flood-key', 'quiet-key'];
const MB = 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function memory(): { heap: number; rss: number } {
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed / MB, rss: rss / MB };
}

/**
 * The flood runs in its own Node process, as a flooding client would: only the server's work on it shares this
 * process's event loop with the quiet key's calls. It prints the opened MCP session ids and the 429 count as JSON.
 */
const FLOOD_SCRIPT = `
const [base, key, total, inFlight] = process.argv.slice(1);
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } });
const opened = [];
let refused = 0, next = 0;
await Promise.all(Array.from({ length: Number(inFlight) }, async () => {
  while (next < Number(total)) {
    next++;
    const res = await fetch(base + '/mcp', { method: 'POST', body,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-svc-api-key': key } });
    await res.arrayBuffer();
    const id = res.headers.get('mcp-session-id');
    if (res.status === 200 && id) opened.push(id);
    else if (res.status === 429) refused++;
    else throw new Error('initialize answered ' + res.status);
  }
}));
process.stdout.write(JSON.stringify({ opened, refused }));
`;

function flood(base: string): Promise<{ opened: string[]; refused: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOD_SCRIPT, base, KEYS[0]!, String(FLOOD), String(IN_FLIGHT)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the flood process exited ${code}`))));
  });
}

async function remove(base: string, id: string): Promise<void> {
  const res = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': id, 'x-svc-api-key': KEYS[0]! } });
  await res.arrayBuffer();
}

/** Calls session_list as the quiet key until `until` resolves (or `count` calls when it is undefined). */
async function calls(mcp: Client, latencies: number[], until?: Promise<unknown>, count = CALLS): Promise<void> {
  let done = false;
  void until?.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; until ? !done : i < count; i++) {
    const started = performance.now();
    const result = (await mcp.callTool({ name: 'session_list', arguments: {} })) as CallToolResult;
    if (result.isError) throw new Error(`session_list failed: ${JSON.stringify(result.content)}`);
    latencies.push(performance.now() - started);
  }
}

export async function run(): Promise<void> {
  const service = new BrowserService({ logger: silentLogger() });
  const http = await serveHttp(service, { port: 0, host: '127.0.0.1', apiKeys: KEYS, allowedHosts: [] });
  const quiet = new Client({ name: 'quiet', version: '1' });
  await quiet.connect(
    new StreamableHTTPClientTransport(new URL(`${http.url}/mcp`), { requestInit: { headers: { 'x-svc-api-key': KEYS[1]! } } }),
  );
  try {
    const before: number[] = [];
    await calls(quiet, before);
    const start = memory();

    const during: number[] = [];
    const flooding = flood(http.url);
    await calls(quiet, during, flooding);
    const { opened, refused } = await flooding;
    const open = http.mcpSessionCount();
    const full = memory();

    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, k) => {
        for (let i = k; i < opened.length; i += IN_FLIGHT) await remove(http.url, opened[i]!);
      }),
    );
    const left = http.mcpSessionCount();
    const after: number[] = [];
    await calls(quiet, after);
    const end = memory();

    printTable(
      `Another key's session_list during a flood of ${FLOOD} initializes from one key (${IN_FLIGHT} at a time; ms)`,
      ['phase', 'calls', 'median', 'p90', 'vs before (median)'],
      [
        ['before', before.length, median(before), percentile(before, 90), 1],
        ['during the flood', during.length, median(during), percentile(during, 90), median(during) / median(before)],
        ['after', after.length, median(after), percentile(after, 90), median(after) / median(before)],
      ],
    );
    printTable(
      `What the flood got, and the server's memory after a full GC (MB)`,
      ['point', 'MCP sessions open', 'heap used', 'RSS', 'heap vs start'],
      [
        ['before the flood', 1, start.heap, start.rss, 0],
        [`flood done (${opened.length} opened, ${refused} refused 429)`, open, full.heap, full.rss, full.heap - start.heap],
        ['all flood sessions deleted', left, end.heap, end.rss, end.heap - start.heap],
      ],
    );
  } finally {
    await quiet.close();
    await http.close();
    await service.close();
  }
}
