import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { spawn } from 'node:child_process';
import { watchDnsPeers } from '../src/http/peer-dns.js';
import { FORWARDED_HEADER, parsePeerFlag, Peers } from '../src/http/peers.js';
import { chromiumUnder, isAlive } from './fixtures/processes.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { api, rawRequest, readSse, startHttp, type TestHttp } from './http-fixture.js';

const KEY = 'peer-test-key-one';
const OTHER_KEY = 'peer-test-key-two';

interface Instance extends TestHttp {
  peers: Peers;
  /** Requests this instance received, newest last. */
  seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }>;
}

/** An instance in-process on 127.0.0.1 port 0; peers are added once every instance listens. */
async function startInstance(id: string): Promise<Instance> {
  const peers = new Peers(id);
  const service = new BrowserService({ logger: silentLogger(), env: {}, egressPolicy: 'all', instanceId: id });
  const http = await startHttp({ apiKeys: [KEY, OTHER_KEY], peers }, service);
  const seen: Instance['seen'] = [];
  http.http.server.on('request', (req) => seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers }));
  return { ...http, peers, seen };
}

/** Requests an instance received, without the health checks a peer with a slow call in flight sends it. */
function calls(instance: Instance): number {
  return instance.seen.filter((req) => req.url !== '/healthz').length;
}

async function mcpClient(url: string, key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'peers-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

describe('the instance flags', () => {
  it('refuses peers without an instance id, malformed peers, and an id that cannot tag a session id', { timeout: 180_000 }, async () => {
    // Awaited, not spawnSync with a 20 s timeout: on a loaded machine loading the CLI alone took longer than that.
    const cli = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['dist/cli.js', '--transport', 'http', '--port', '0', '--peer', 'b=http://127.0.0.1:1'], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.once('exit', (status) => resolve({ status, stderr }));
    });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('--peer and --peers-from-dns need --instance-id');

    expect(() => parsePeerFlag('http://127.0.0.1:1')).toThrow('Expected ID=URL');
    expect(() => parsePeerFlag('b=ftp://127.0.0.1:1')).toThrow('must be http: or https:');
    expect(() => new Peers('a.b')).toThrow('Invalid instance id');
    expect(() => new Peers('a', [parsePeerFlag('a=http://127.0.0.1:1')])).toThrow("this instance's own id");
    expect(new Peers('a', [parsePeerFlag('b=http://127.0.0.1:9/')]).list()).toEqual([{ id: 'b', url: 'http://127.0.0.1:9' }]);
  });
});

describe('several server instances routing to each other', () => {
  let site: SiteServer;
  let a: Instance;
  let b: Instance;
  let onB: string;
  let onA: string;

  beforeAll(async () => {
    site = await startSiteServer();
    [a, b] = await Promise.all([startInstance('a'), startInstance('b')]);
    a.peers.set({ id: 'b', url: b.url });
    b.peers.set({ id: 'a', url: a.url });
    onB = (await api(b.url, 'POST', '/v1/sessions/start', { key: KEY })).json.data.id;
    onA = (await api(a.url, 'POST', '/v1/sessions/start', { key: KEY })).json.data.id;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close().catch(() => undefined);
    await site?.close();
  });

  it('tags session ids with the instance and keeps 160 random bits', () => {
    expect(onB).toMatch(/^b\.[A-Za-z0-9_-]{27}$/);
    expect(onA).toMatch(/^a\.[A-Za-z0-9_-]{27}$/);
  });

  it("answers REST calls for a peer's session as if local: get, navigate, extract", async () => {
    const info = await api(a.url, 'GET', `/v1/sessions/${onB}`, { key: KEY });
    expect(info).toMatchObject({ status: 200, json: { success: true, data: { id: onB, url: 'about:blank' } } });

    const nav = await api(a.url, 'POST', `/v1/sessions/${onB}/navigate`, { key: KEY, body: { url: site.url('/index.html') } });
    expect(nav.status).toBe(200);
    expect(nav.json.data.result).toMatchObject({ status: 200, url: site.url('/index.html') });

    const text = await api(a.url, 'POST', `/v1/sessions/${onB}/extract`, { key: KEY, body: {} });
    expect(text.status).toBe(200);
    expect(text.json.data.result.pageText).toContain('Test site');

    // B did the work, told by A, with the caller's own key and nothing else of the request's identity.
    const forwarded = b.seen.filter((req) => req.url === `/v1/sessions/${onB}/navigate`);
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]!.headers[FORWARDED_HEADER]).toBe('a');
    expect(forwarded[0]!.headers['x-svc-api-key']).toBe(KEY);
    expect((await api(b.url, 'GET', `/v1/sessions/${onB}`, { key: KEY })).json.data.url).toBe(site.url('/index.html'));
  });

  it("pipes a peer's Server-Sent Events through", async () => {
    const res = await fetch(`${a.url}/v1/sessions/${onB}/navigate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY, 'x-stream-response': 'true' },
      body: JSON.stringify({ url: site.url('/page2.html') }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events[0]).toMatchObject({ event: 'starting', data: { sessionId: onB } });
    expect(events.at(-1)).toMatchObject({ event: 'finished', data: { success: true, data: { result: { status: 200 } } } });
  });

  it("runs MCP tool calls for a peer's session through the peer's REST routes, and lists every instance", async () => {
    const client = await mcpClient(a.url, KEY);
    try {
      const nav = (await client.callTool({
        name: 'navigate',
        arguments: { sessionId: onB, url: site.url('/index.html') },
      })) as CallToolResult;
      expect(nav.isError).toBeFalsy();
      expect(nav.structuredContent).toMatchObject({ status: 200, url: site.url('/index.html') });
      expect(nav._meta?.actionId).toEqual(expect.any(String));

      const read = (await client.callTool({ name: 'extract', arguments: { sessionId: onB } })) as CallToolResult;
      expect(read.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Test site') });

      // act, observe and screenshot too: every operation of the table is forwarded, not a hand-kept list.
      const observed = (await client.callTool({ name: 'observe', arguments: { sessionId: onB } })) as CallToolResult;
      expect(observed.isError).toBeFalsy();
      expect((observed.structuredContent as { refs: string[] }).refs.length).toBeGreaterThan(0);
      const acted = (await client.callTool({
        name: 'act',
        arguments: { sessionId: onB, action: { method: 'scroll', arguments: { direction: 'down' } } },
      })) as CallToolResult;
      expect(acted.isError).toBeFalsy();
      expect(acted.structuredContent).toMatchObject({ success: true });
      expect(acted.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Scrolled/) });
      const shot = (await client.callTool({ name: 'screenshot', arguments: { sessionId: onB } })) as CallToolResult;
      expect(shot.isError).toBeFalsy();
      expect(shot.structuredContent).toMatchObject({ mimeType: 'image/png', width: expect.any(Number) });
      const image = shot.content.find((block) => block.type === 'image') as { data: string } | undefined;
      expect(Buffer.from(image!.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
      expect(b.seen.filter((req) => /\/(observe|act|screenshot)$/.test(req.url)).map((req) => req.url.split('/').pop())).toEqual([
        'observe',
        'act',
        'screenshot',
      ]);

      const missing = (await client.callTool({
        name: 'navigate',
        arguments: { sessionId: 'b.nope', url: site.url('/') },
      })) as CallToolResult;
      expect(missing).toMatchObject({ isError: true, _meta: { error: { code: 'session_not_found' } } });

      const listed = (await client.callTool({ name: 'session_list', arguments: {} })) as CallToolResult;
      const ids = (listed.structuredContent as { sessions: Array<{ id: string }> }).sessions.map((session) => session.id);
      expect(ids).toEqual(expect.arrayContaining([onA, onB]));
    } finally {
      await client.close();
    }
  });

  it('sends the requests of an MCP session to the instance that holds it, whichever instance the balancer picked', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${KEY}` };
    const init = await fetch(`${b.url}/mcp`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const mcpSession = init.headers.get('mcp-session-id')!;
    expect(mcpSession).toMatch(/^b\./);
    await init.body?.cancel();
    const next = { ...headers, 'mcp-session-id': mcpSession, 'mcp-protocol-version': '2025-06-18' };
    const notified = await fetch(`${a.url}/mcp`, {
      method: 'POST',
      headers: next,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(notified.status).toBe(202);
    const call = await fetch(`${a.url}/mcp`, {
      method: 'POST',
      headers: next,
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'session_list', arguments: {} } }),
    });
    expect(call.status).toBe(200);
    const [message] = await readSse(call);
    expect(message!.data.result.structuredContent.sessions.map((session: { id: string }) => session.id)).toEqual(
      expect.arrayContaining([onA, onB]),
    );
    expect(b.seen.filter((req) => req.url === '/mcp' && req.headers[FORWARDED_HEADER] === 'a')).toHaveLength(2);
  });

  it("lists the caller's sessions across instances, or one instance with ?local=true", async () => {
    const all = await api(a.url, 'GET', '/v1/sessions', { key: KEY });
    expect(all.json.data.sessions.map((session: { id: string }) => session.id).sort()).toEqual([onA, onB].sort());
    expect(all.json.data.unavailable).toBeUndefined();
    const local = await api(a.url, 'GET', '/v1/sessions?local=true', { key: KEY });
    expect(local.json.data.sessions.map((session: { id: string }) => session.id)).toEqual([onA]);
    const other = await api(a.url, 'GET', '/v1/sessions', { key: OTHER_KEY });
    expect(other.json.data.sessions).toEqual([]);
  });

  it('never widens access: a wrong key stops at the first instance, another key gets not-found from the peer', async () => {
    const before = calls(b);
    const wrong = await api(a.url, 'POST', `/v1/sessions/${onB}/navigate`, { key: 'not-a-key', body: { url: site.url('/') } });
    expect(wrong).toMatchObject({ status: 401, json: { error: { code: 'unauthorized' } } });
    const none = await api(a.url, 'GET', `/v1/sessions/${onB}`);
    expect(none.status).toBe(401);
    expect(calls(b)).toBe(before);

    const foreign = await api(a.url, 'GET', `/v1/sessions/${onB}`, { key: OTHER_KEY });
    expect(foreign).toMatchObject({ status: 404, json: { error: { code: 'session_not_found' } } });
    expect(calls(b)).toBe(before + 1);
  });

  it('contacts only configured peers and never forwards a forwarded request', async () => {
    const before = calls(b);
    const unknown = await api(a.url, 'GET', `/v1/sessions/z.${onB.slice(2)}`, { key: KEY });
    expect(unknown).toMatchObject({ status: 404, json: { error: { code: 'session_not_found' } } });
    const relayed = await api(a.url, 'GET', `/v1/sessions/${onB}`, { key: KEY, headers: { [FORWARDED_HEADER]: 'b' } });
    expect(relayed).toMatchObject({ status: 404, json: { error: { code: 'session_not_found' } } });
    expect(calls(b)).toBe(before);
  });

  it('a crafted request line naming another host reaches neither that host nor a route', async () => {
    const other = createServer((_req, res) => res.end('{}'));
    let reached = 0;
    other.on('request', () => reached++);
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const port = (other.address() as AddressInfo).port;
      const res = await rawRequest(a.port, { path: `//127.0.0.1:${port}/v1/sessions/${onB}`, headers: { 'x-svc-api-key': KEY } });
      // Paths are matched as sent: "//host/..." is no route (test/http-paths.test.ts), so nothing is forwarded at all.
      expect(res).toMatchObject({ status: 404, json: { error: { code: 'not_found' } } });
      expect(reached).toBe(0);
    } finally {
      other.close();
    }
  });

  it('learns peers behind a DNS name from their /healthz, never adding itself', async () => {
    const table = new Peers('c');
    const stop = watchDnsPeers(table, { name: 'localhost', port: b.port, logger: silentLogger(), refreshMs: 200 });
    try {
      await expect.poll(() => table.get('b')?.url).toMatch(/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/);
      expect((await api(b.url, 'GET', '/healthz')).json.data.instanceId).toBe('b');
    } finally {
      stop();
    }
    const self = new Peers('b');
    const stopSelf = watchDnsPeers(self, { name: 'localhost', port: b.port, logger: silentLogger(), refreshMs: 100 });
    // b answers its own /healthz: after a few refreshes its table still lists nobody.
    await expect.poll(() => b.seen.filter((req) => req.url === '/healthz').length).toBeGreaterThanOrEqual(4);
    stopSelf();
    expect(self.list()).toEqual([]);
  });

  it('answers session_unavailable for the sessions of an instance process killed with SIGKILL', { timeout: 180_000 }, async () => {
    const child = spawn(process.execPath, ['dist/cli.js', '--transport', 'http', '--port', '0', '--instance-id', 'c', '--api-key', KEY], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'info' },
    });
    let browsers: number[] = [];
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
          const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr);
          if (match) resolve(match[1]!);
        });
        child.once('exit', (code) => reject(new Error(`instance c exited (${code}): ${stderr}`)));
      });
      a.peers.set({ id: 'c', url });
      const onC = (await api(url, 'POST', '/v1/sessions/start', { key: KEY })).json.data.id as string;
      expect((await api(a.url, 'GET', `/v1/sessions/${onC}`, { key: KEY })).status).toBe(200);
      browsers = chromiumUnder(child.pid!).map((entry) => entry.pid);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const started = performance.now();
      const gone = await api(a.url, 'GET', `/v1/sessions/${onC}`, { key: KEY });
      expect(gone).toMatchObject({ status: 503, json: { error: { code: 'session_unavailable' } } });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect((await api(a.url, 'GET', '/v1/sessions', { key: KEY })).json.data.unavailable).toEqual(['c']);
      // Its browser goes with it (the pipe to Chromium closed).
      await expect.poll(() => browsers.filter(isAlive), { timeout: 10_000 }).toEqual([]);
    } finally {
      a.peers.delete('c');
      child.kill('SIGKILL');
      for (const pid of browsers.filter(isAlive)) process.kill(pid, 'SIGKILL');
    }
  });

  it('answers session_unavailable within seconds once a peer is gone, and keeps serving its own sessions', async () => {
    // A stream through A whose peer dies mid-operation still ends with exactly one error event.
    const streamed = await fetch(`${a.url}/v1/sessions/${onB}/navigate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY, 'x-stream-response': 'true' },
      body: JSON.stringify({ url: site.url('/slow?ms=20000') }),
    });
    let closing: Promise<void> | undefined;
    const events = await readSse(streamed, (event) => {
      if (event.event === 'connected') closing = b.close();
    });
    await closing;
    expect(events.map((event) => event.event).slice(0, 2)).toEqual(['starting', 'connected']);
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { error: { code: 'session_unavailable' } } });

    const started = performance.now();
    const gone = await api(a.url, 'POST', `/v1/sessions/${onB}/navigate`, { key: KEY, body: { url: site.url('/') } });
    expect(gone).toMatchObject({ status: 503, json: { success: false, error: { code: 'session_unavailable' } } });
    expect(gone.json.error.message).toContain('"b"');
    expect(performance.now() - started).toBeLessThan(5_000);

    const own = await api(a.url, 'POST', `/v1/sessions/${onA}/navigate`, { key: KEY, body: { url: site.url('/index.html') } });
    expect(own.json.data.result.status).toBe(200);
    const listed = await api(a.url, 'GET', '/v1/sessions', { key: KEY });
    expect(listed.json.data).toMatchObject({ sessions: [{ id: onA }], unavailable: ['b'] });
  });
});
