import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { Peers } from '../src/http/peers.js';
import { loginActions, loginSecrets } from './fixtures/login.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { bearer, connectMcpHttp } from './fixtures/mcp-http.js';

const KEY_A = 'profiles-key-a';
const KEY_B = 'profiles-key-b';
const SECRET = 'profiles-http-test-secret-42';

/** Profiles over REST and MCP, scoped by API key, kept across a restart and shared by two instances on one directory. */
describe('profiles over REST and MCP', () => {
  let site: SiteServer;
  let dir: string;
  let server: TestHttp;

  const start = (options: { instanceId?: string; peers?: Peers; secret?: string } = {}) =>
    startHttp(
      { apiKeys: [KEY_A, KEY_B], peers: options.peers },
      new BrowserService({
        logger: silentLogger(),
        egressPolicy: 'all',
        env: {},
        instanceId: options.instanceId,
        profiles: { dir: join(dir, 'profiles'), secret: options.secret ?? SECRET, keyFile: join(dir, 'unused.key') },
      }),
    );
  const post = (http: TestHttp, path: string, key: string, body: unknown = {}) => api(http.url, 'POST', path, { key, body });
  const startSession = async (http: TestHttp, key: string, body: unknown = {}) => {
    const res = await post(http, '/v1/sessions/start', key, body);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    return res.json.data.id as string;
  };
  const signIn = async (http: TestHttp, key: string, id: string) => {
    await post(http, `/v1/sessions/${id}/navigate`, key, { url: site.url('/auth/login.html') });
    const observed = (await post(http, `/v1/sessions/${id}/observe`, key)).json.data.result;
    for (const request of loginActions(observed)) expect((await post(http, `/v1/sessions/${id}/act`, key, request)).status).toBe(200);
  };
  const homeOf = async (http: TestHttp, key: string, id: string) => {
    await post(http, `/v1/sessions/${id}/navigate`, key, { url: site.url('/auth/home') });
    const text: string = (await post(http, `/v1/sessions/${id}/extract`, key)).json.data.result.pageText;
    return { status: /Signed (in as \w+|out)/.exec(text)?.[0], note: /Note: (\S+)/.exec(text)?.[1] };
  };
  const mcpClient = async (http: TestHttp, key: string) =>
    (await connectMcpHttp(http.url, { name: 'profiles-test', headers: bearer(key) })).client;
  const call = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    site = await startSiteServer();
    dir = await mkdtemp(join(tmpdir(), 'profiles-http-'));
    server = await start();
  });
  afterAll(async () => {
    await server?.close();
    await site?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('signs in once, saves the profile, and a new session from it (or from the state the caller kept) is signed in', async () => {
    const id = await startSession(server, KEY_A);
    await signIn(server, KEY_A, id);
    const state = await post(server, `/v1/sessions/${id}/state`, KEY_A);
    expect(state.status).toBe(200);
    expect(state.json.data).toMatchObject({ actionId: expect.any(String), result: { cookies: [{ name: 'ledger_session' }] } });
    const { note } = loginSecrets(state.json.data.result, site.origin);
    const saved = await post(server, `/v1/sessions/${id}/saveProfile`, KEY_A, { name: 'work' });
    expect(saved.json.data.result).toMatchObject({ name: 'work', cookies: 1, origins: 1 });
    expect((await post(server, `/v1/sessions/${id}/end`, KEY_A)).status).toBe(200);

    const fromProfile = await startSession(server, KEY_A, { profile: 'work' });
    expect(await homeOf(server, KEY_A, fromProfile)).toEqual({ status: 'Signed in as alice', note });
    const fromState = await startSession(server, KEY_A, { storageState: state.json.data.result });
    expect(await homeOf(server, KEY_A, fromState)).toEqual({ status: 'Signed in as alice', note });
    await post(server, `/v1/sessions/${fromState}/end`, KEY_A, { saveProfile: false });
    expect((await post(server, `/v1/sessions/${fromProfile}/end`, KEY_A, { saveProfile: true })).status).toBe(200);

    const listed = await api(server.url, 'GET', '/v1/profiles', { key: KEY_A });
    expect(listed.json).toEqual({ success: true, data: { profiles: [expect.objectContaining({ name: 'work' })] } });
  });

  it("gives key B a 404 for key A's profile on every operation, as for a name never saved", async () => {
    const started = await post(server, '/v1/sessions/start', KEY_B, { profile: 'work' });
    expect(started.status).toBe(404);
    expect(started.json.error.code).toBe('profile_not_found');
    const never = await post(server, '/v1/sessions/start', KEY_B, { profile: 'never-saved' });
    expect(never.json.error.message).toBe(started.json.error.message.replace('"work"', '"never-saved"'));
    expect((await api(server.url, 'GET', '/v1/profiles', { key: KEY_B })).json.data.profiles).toEqual([]);
    const deleted = await post(server, '/v1/profiles/delete', KEY_B, { name: 'work' });
    expect([deleted.status, deleted.json.error.code]).toEqual([404, 'profile_not_found']);
    expect((await api(server.url, 'GET', '/v1/profiles', { key: KEY_A })).json.data.profiles).toHaveLength(1);
  });

  it('a cookie Chromium would refuse is 400 invalid_argument naming it by index and name, never its value (was 503)', async () => {
    const cookie = { name: 'ok', value: 'v', domain: 'x.test', path: '/', expires: -1, httpOnly: false, secure: true, sameSite: 'Lax' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '__Host-sid', secure: false }, 'name'],
      [{ value: 'secret-value\r\nSet-Cookie: x' }, 'value'],
      [{ value: 'secret-value\u0000' }, 'value'],
      [{ name: 'line\nbreak' }, 'name'],
      [{ expires: 1e300 }, 'expires'],
      [{ partitionKey: 'not a site' }, 'partitionKey'],
    ];
    for (const [over, field] of cases) {
      const refused = await post(server, '/v1/sessions/start', KEY_A, {
        storageState: { cookies: [cookie, { ...cookie, ...over }], origins: [] },
      });
      expect([refused.status, refused.json.error.code], JSON.stringify(over)).toEqual([400, 'invalid_argument']);
      expect(refused.json.error.message).toContain(`storageState.cookies.1.${field}`);
      expect(refused.json.error.message).toContain(`cookie ${JSON.stringify(over.name ?? 'ok')}`);
      expect(JSON.stringify(refused.json)).not.toContain('secret-value');
    }
    expect((await api(server.url, 'GET', '/v1/sessions', { key: KEY_A })).json.data.sessions).toHaveLength(0);
  });

  it('answers invalid_argument naming the field of a bad storage state, and 400 for a bad name', async () => {
    const bad = await post(server, '/v1/sessions/start', KEY_A, {
      storageState: {
        cookies: [
          {
            name: 'a',
            value: 'top-secret-cookie',
            domain: 'x.test',
            path: 'no-slash',
            expires: -1,
            httpOnly: false,
            secure: false,
            sameSite: 'Lax',
          },
        ],
        origins: [],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_argument');
    expect(bad.json.error.message).toContain('storageState.cookies.0.path');
    expect(JSON.stringify(bad.json)).not.toContain('top-secret-cookie');
    const name = await post(server, '/v1/profiles/delete', KEY_A, { name: '../../etc/passwd' });
    expect([name.status, name.json.error.code]).toEqual([400, 'invalid_argument']);
    // "a " beside "a" would be two profiles that list alike.
    for (const padded of ['a ', ' a', 'a\t'])
      for (const [path, body] of [
        ['/v1/profiles/delete', { name: padded }],
        ['/v1/sessions/start', { profile: padded }],
      ] as const) {
        const refused = await post(server, path, KEY_A, body);
        expect([refused.status, refused.json.error.code], `${path} ${JSON.stringify(body)}`).toEqual([400, 'invalid_argument']);
      }
    expect((await api(server.url, 'GET', '/v1/openapi.json')).json.paths['/v1/sessions/{id}/state']).toBeDefined();
  });

  it('drives the same operations through the MCP profile_list tool (state, save, delete folded in) and session_start/session_end', async () => {
    const client = await mcpClient(server, KEY_A);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('profile_list');
      const started = await call(client, 'session_start', { profile: 'work' });
      const sessionId = (started.structuredContent as { id: string }).id;
      const state = await call(client, 'profile_list', { operation: 'session_state', sessionId });
      expect((state.structuredContent as { cookies: Array<{ name: string }> }).cookies[0]!.name).toBe('ledger_session');
      const saved = await call(client, 'profile_list', { operation: 'profile_save', sessionId, name: 'from-mcp' });
      expect(saved.structuredContent).toMatchObject({ name: 'from-mcp', cookies: 1 });
      expect((await call(client, 'profile_list', {})).structuredContent).toMatchObject({
        profiles: [{ name: 'from-mcp' }, { name: 'work' }],
      });
      expect((await call(client, 'session_end', { sessionId, saveProfile: true })).isError).toBeFalsy();
      expect((await call(client, 'profile_list', { operation: 'profile_delete', name: 'from-mcp' })).structuredContent).toEqual({
        success: true,
      });
      expect((await call(client, 'profile_list', {})).structuredContent).toMatchObject({ profiles: [{ name: 'work' }] });
      const missing = await call(client, 'profile_list', { operation: 'profile_save' });
      expect(missing.isError).toBe(true);
      expect((missing._meta as { error: { code: string } }).error.code).toBe('invalid_argument');
      const other = await mcpClient(server, KEY_B);
      const refused = await call(other, 'session_start', { profile: 'work' });
      expect((refused._meta as { error: { code: string } }).error.code).toBe('profile_not_found');
      await other.close();
    } finally {
      await client.close();
    }
  });

  it('keeps the profiles across a server restart: the same key finds and loads them', async () => {
    await server.close();
    server = await start();
    expect((await api(server.url, 'GET', '/v1/profiles', { key: KEY_A })).json.data.profiles.map((p: { name: string }) => p.name)).toEqual([
      'work',
    ]);
    const id = await startSession(server, KEY_A, { profile: 'work' });
    expect((await homeOf(server, KEY_A, id)).status).toBe('Signed in as alice');
    await post(server, `/v1/sessions/${id}/end`, KEY_A);
  });

  it('two instances on one shared profile directory: saved on one, loaded on the other, saves forwarded to the holder', async () => {
    const peersA = new Peers('a');
    const peersB = new Peers('b');
    const [a, b] = await Promise.all([start({ instanceId: 'a', peers: peersA }), start({ instanceId: 'b', peers: peersB })]);
    peersA.set({ id: 'b', url: b.url });
    peersB.set({ id: 'a', url: a.url });
    try {
      const onA = await startSession(a, KEY_A);
      await signIn(a, KEY_A, onA);
      // Asked of instance b, saved by instance a (which holds the session) into the shared directory.
      expect((await post(b, `/v1/sessions/${onA}/saveProfile`, KEY_A, { name: 'shared' })).status).toBe(200);
      await post(a, `/v1/sessions/${onA}/end`, KEY_A);
      const onB = await startSession(b, KEY_A, { profile: 'shared' });
      expect(onB).toMatch(/^b\./);
      expect((await homeOf(b, KEY_A, onB)).status).toBe('Signed in as alice');
      const client = await mcpClient(a, KEY_A);
      const saved = await call(client, 'profile_list', { operation: 'profile_save', sessionId: onB });
      expect(saved.structuredContent).toMatchObject({ name: 'shared' });
      await client.close();
      expect((await api(a.url, 'GET', '/v1/profiles', { key: KEY_A })).json.data.profiles.map((p: { name: string }) => p.name)).toEqual([
        'shared',
        'work',
      ]);
      await post(a, `/v1/sessions/${onB}/end`, KEY_A);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('after a restart with another secret the profiles are listed as unreadable, load answers profile_unreadable, delete works', async () => {
    await server.close();
    server = await start({ secret: 'another-profiles-secret-0987' });
    const listed = await api(server.url, 'GET', '/v1/profiles', { key: KEY_A });
    expect(listed.json.data).toEqual({ profiles: [], unreadable: 2 });
    const refused = await post(server, '/v1/sessions/start', KEY_A, { profile: 'work' });
    expect(refused.status).toBe(422);
    expect(refused.json.error).toMatchObject({ code: 'profile_unreadable', details: { reason: 'tampered' } });
    expect((await post(server, '/v1/profiles/delete', KEY_A, { name: 'work' })).status).toBe(200);
    expect((await api(server.url, 'GET', '/v1/profiles', { key: KEY_A })).json.data).toEqual({ profiles: [], unreadable: 1 });
    // Another key's names stay its own: the same name is not found for key B.
    expect((await post(server, '/v1/profiles/delete', KEY_B, { name: 'shared' })).json.error.code).toBe('profile_not_found');
    expect((await post(server, '/v1/profiles/delete', KEY_A, { name: 'shared' })).status).toBe(200);
    expect((await api(server.url, 'GET', '/v1/profiles', { key: KEY_A })).json.data).toEqual({ profiles: [] });
  });
});
