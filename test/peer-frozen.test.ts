import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { Peers } from '../src/http/peers.js';
import { chromiumUnder, isAlive } from './fixtures/processes.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { api, readSse, startHttp, type TestHttp } from './http-fixture.js';

const KEY = 'frozen-peer-key';
/** The navigate's own timeout; every forwarded call must answer within it plus a few seconds. */
const OWN_TIMEOUT_MS = 5_000;
/** "A few seconds": the peer's health check interval and timeout, with room for a loaded machine. */
const SLACK_MS = 12_000;

/** Instance b as its own process (so it can be stopped with SIGSTOP); resolves with its URL once it listens. */
function startProcessInstance(): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(
    process.execPath,
    ['dist/cli.js', '--transport', 'http', '--port', '0', '--instance-id', 'b', '--api-key', KEY, '--egress-policy', 'all'],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' } },
  );
  const url = new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk;
      const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`instance b exited (${code}): ${stderr}`)));
  });
  return { child, url };
}

describe('a frozen peer instance (SIGSTOP)', () => {
  let site: SiteServer;
  let a: TestHttp;
  let b: ChildProcess;
  let browsers: number[] = [];
  let onB: string;
  let client: Client;

  beforeAll(async () => {
    site = await startSiteServer();
    const started = startProcessInstance();
    b = started.child;
    const bUrl = await started.url;
    const service = new BrowserService({ logger: silentLogger(), env: {}, egressPolicy: 'all', instanceId: 'a' });
    a = await startHttp({ apiKeys: [KEY], peers: new Peers('a', [{ id: 'b', url: bUrl }]) }, service);
    onB = (await api(bUrl, 'POST', '/v1/sessions/start', { key: KEY })).json.data.id as string;
    expect((await api(a.url, 'GET', `/v1/sessions/${onB}`, { key: KEY })).status).toBe(200);
    browsers = chromiumUnder(b.pid!).map((entry) => entry.pid);
    client = new Client({ name: 'frozen-peer-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${KEY}` } } }),
    );
    b.kill('SIGSTOP');
  }, 120_000);
  afterAll(async () => {
    b?.kill('SIGCONT');
    b?.kill('SIGKILL');
    for (const pid of browsers.filter(isAlive)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone with its parent meanwhile
      }
    }
    await client?.close().catch(() => undefined);
    await a?.close();
    await site?.close();
  });

  async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
    const started = performance.now();
    const value = await call();
    return { value, ms: performance.now() - started };
  }

  it('answers 503 session_unavailable naming the instance within the call timeout plus a few seconds: REST, SSE, MCP, GET', async () => {
    const body = { url: site.url('/index.html'), options: { timeout: OWN_TIMEOUT_MS } };
    const [rest, sse, mcp, get] = await Promise.all([
      timed(() => api(a.url, 'POST', `/v1/sessions/${onB}/navigate`, { key: KEY, body })),
      timed(async () => {
        const res = await fetch(`${a.url}/v1/sessions/${onB}/navigate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY, 'x-stream-response': 'true' },
          body: JSON.stringify(body),
        });
        return res.status === 200 ? { status: res.status, events: await readSse(res) } : { status: res.status, json: await res.json() };
      }),
      timed(() => client.callTool({ name: 'navigate', arguments: { sessionId: onB, ...body } }) as Promise<CallToolResult>),
      timed(() => api(a.url, 'GET', `/v1/sessions/${onB}`, { key: KEY })),
    ]);
    expect(rest.value).toMatchObject({ status: 503, json: { success: false, error: { code: 'session_unavailable' } } });
    expect(rest.value.json.error.message).toContain('"b"');
    // The stream's headers never came either: 503 before the stream opened.
    expect(sse.value).toMatchObject({ status: 503, json: { error: { code: 'session_unavailable' } } });
    expect(mcp.value.isError).toBe(true);
    expect(mcp.value._meta?.error).toMatchObject({ code: 'session_unavailable' });
    expect(get.value).toMatchObject({ status: 503, json: { error: { code: 'session_unavailable' } } });
    for (const call of [rest, sse, mcp, get]) expect(call.ms).toBeLessThan(OWN_TIMEOUT_MS + SLACK_MS);
    console.log(
      `frozen peer: 503 after ${[rest, sse, mcp, get].map((call) => Math.round(call.ms)).join(' / ')} ms (REST / SSE / MCP / GET)`,
    );
  }, 60_000);
});
