import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserService } from '../src/core/service.js';
import { serveHttp } from '../src/http/server.js';
import { bearer, connectMcpHttp } from './fixtures/mcp-http.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { api, rawRequest, startHttp, type TestHttp } from './http-fixture.js';

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-fedcba9876543210';

describe('HTTP auth and key scopes', () => {
  let server: TestHttp;
  const logs: string[] = [];

  beforeAll(async () => {
    // Every log line at debug level is kept, to check no key ever reaches the log.
    const sink = new Writable({ write: (chunk, _enc, done) => (logs.push(String(chunk)), done()) });
    server = await startHttp({ apiKeys: [KEY_A, KEY_B] }, new BrowserService({ logger: pino({ level: 'debug' }, sink) }));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('REST needs a valid x-svc-api-key (401 otherwise) and accepts x-svc-project-id', async () => {
    const none = await api(server.url, 'GET', '/v1/sessions');
    expect(none).toMatchObject({ status: 401, json: { success: false, error: { code: 'unauthorized' } } });
    const wrong = await api(server.url, 'GET', '/v1/sessions', { key: 'not-a-key' });
    expect(wrong.status).toBe(401);
    const bearerOnRest = await api(server.url, 'GET', '/v1/sessions', { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(bearerOnRest.status).toBe(401);
    const ok = await api(server.url, 'GET', '/v1/sessions', { key: KEY_A, headers: { 'x-svc-project-id': 'ignored' } });
    expect(ok).toMatchObject({ status: 200, json: { success: true, data: { sessions: [] } } });
    expect((await api(server.url, 'GET', '/healthz')).status).toBe(200);
    expect((await api(server.url, 'GET', '/v1/openapi.json')).status).toBe(200);
  });

  it("hides one key's sessions from another key: 404, never 403", async () => {
    const started = await api(server.url, 'POST', '/v1/sessions/start', { key: KEY_A });
    const id = started.json.data.id as string;
    for (const [method, path, body] of [
      ['GET', `/v1/sessions/${id}`, undefined],
      ['POST', `/v1/sessions/${id}/navigate`, { url: 'about:blank' }],
      ['POST', `/v1/sessions/${id}/extract`, {}],
      ['POST', `/v1/sessions/${id}/end`, undefined],
    ] as const) {
      const res = await api(server.url, method, path, { key: KEY_B, body });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.json.error.code).toBe('session_not_found');
    }
    expect((await api(server.url, 'GET', '/v1/sessions', { key: KEY_B })).json.data.sessions).toEqual([]);
    expect((await api(server.url, 'GET', '/v1/sessions', { key: KEY_A })).json.data.sessions.map((s: { id: string }) => s.id)).toEqual([
      id,
    ]);
    // Streaming requests are refused before the stream opens.
    const streamed = await api(server.url, 'POST', `/v1/sessions/${id}/navigate`, {
      key: KEY_B,
      body: { url: 'about:blank', streamResponse: true },
    });
    expect(streamed.status).toBe(404);
    expect((await api(server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A })).status).toBe(200);
  });

  it('/mcp takes the key as Bearer or x-svc-api-key, shares sessions with REST for the same key, and scopes MCP sessions by key', async () => {
    const unauthorized = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await unauthorized.json()).error.code).toBe('unauthorized');

    const rest = await api(server.url, 'POST', '/v1/sessions/start', { key: KEY_A });
    const id = rest.json.data.id as string;
    for (const headers of [{ authorization: `Bearer ${KEY_A}` }, { 'x-svc-api-key': KEY_A }] as Array<Record<string, string>>) {
      const { client, transport } = await connectMcpHttp(server.url, { name: 'auth-test', headers });
      const listed = (await client.callTool({ name: 'session_list', arguments: {} })) as CallToolResult;
      expect((listed.structuredContent as { sessions: Array<{ id: string }> }).sessions.map((s) => s.id)).toEqual([id]);

      // The same MCP session id presented with another key is unknown.
      const hijack = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': '2025-06-18',
          authorization: `Bearer ${KEY_B}`,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      expect(hijack.status).toBe(404);
      await client.close();
    }

    const { client: clientB } = await connectMcpHttp(server.url, { name: 'auth-test-b', headers: bearer(KEY_B) });
    const navB = (await clientB.callTool({ name: 'navigate', arguments: { sessionId: id, url: 'about:blank' } })) as CallToolResult;
    expect((navB._meta?.error as { code: string }).code).toBe('session_not_found');
    await clientB.close();
    await api(server.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A });
  });

  it('never writes a key to the log', () => {
    const all = logs.join('');
    expect(all.length).toBeGreaterThan(0);
    expect(all).not.toContain(KEY_A);
    expect(all).not.toContain(KEY_B);
  });
});

describe('HTTP bind and Host policy', () => {
  it('refuses to listen on 0.0.0.0 without keys or allowed hosts, and explains why', async () => {
    const service = new BrowserService({ logger: pino({ level: 'silent' }) });
    await expect(serveHttp(service, { port: 0, host: '0.0.0.0', apiKeys: [], allowedHosts: [] })).rejects.toThrow(
      /--api-key.*--allowed-hosts/s,
    );
    const withKey = await serveHttp(service, { port: 0, host: '0.0.0.0', apiKeys: ['k'], allowedHosts: [] });
    // With a key and no host list, any Host is accepted: the key is the protection.
    expect((await rawRequest(withKey.port, { path: '/healthz', headers: { host: 'browser.internal' } })).status).toBe(200);
    await withKey.close();
    await service.close();
  });

  it('accepts the hosts named by --allowed-hosts besides localhost', async () => {
    const server = await startHttp({ allowedHosts: ['browser.example.test'] });
    expect((await rawRequest(server.port, { path: '/healthz', headers: { host: `browser.example.test:${server.port}` } })).status).toBe(
      200,
    );
    expect((await rawRequest(server.port, { path: '/healthz', headers: { host: 'other.example.test' } })).status).toBe(403);
    expect((await rawRequest(server.port, { path: '/mcp', method: 'POST', headers: { host: 'other.example.test' } })).status).toBe(403);
    await server.close();
  });
});

describe('CLI --transport http', () => {
  it('logs the address it listens on for --port 0 and serves REST with the key it was given', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--transport', 'http', '--port', '0', '--api-key', KEY_A], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no address logged; stderr: ${stderr}`)), 30_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
          const match = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr);
          if (match) {
            clearTimeout(timer);
            resolve(match[1]!);
          }
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
      });
      expect((await api(url, 'GET', '/v1/sessions')).status).toBe(401);
      const started = await api(url, 'POST', '/v1/sessions/start', { key: KEY_A });
      expect(started.status).toBe(200);
      expect((await api(url, 'POST', `/v1/sessions/${started.json.data.id}/end`, { key: KEY_A })).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).not.toContain(KEY_A);
  }, 60_000);

  it('exits 1 with an explanation when asked to listen on 0.0.0.0 without protection', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--transport', 'http', '--port', '0', '--host', '0.0.0.0'], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', SVC_API_KEYS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('Refusing to listen on 0.0.0.0');
  }, 30_000);
});
