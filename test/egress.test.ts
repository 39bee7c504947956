import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { classifyAddress, embeddedIPv4 } from '../src/core/egress/address.js';
import { contextEgress, Egress } from '../src/core/egress/index.js';
import { EgressPolicy, parseAllowRule } from '../src/core/egress/policy.js';
import { createModelClient } from '../src/core/llm/index.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { PageEvent } from '../src/core/sessions.js';
import { closedPort as pickClosedPort } from './fixtures/browser-hosts.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { api, startHttp } from './http-fixture.js';
import { encodedTargets, startAttackSite, startInternalServer, startSilentServer } from './fixtures/egress-sites.js';
import { rejection } from './fixtures/rejection.js';
import { extractOperation, navigateOperation } from '../src/core/operations/index.js';

const OWNER = 'library';

describe('address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::127.0.0.1', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::192.168.0.1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::', 'private'],
    ['example.com', 'not an IP address'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(classifyAddress(address)).toBeUndefined();
  });

  it('reads the IPv4 inside mapped, compatible, NAT64 and 6to4 forms, and nothing inside others', () => {
    expect(embeddedIPv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(embeddedIPv4('::a00:1')).toBe('10.0.0.1');
    expect(embeddedIPv4('64:ff9b::a00:1')).toBe('10.0.0.1');
    expect(embeddedIPv4('2002:a00:1::')).toBe('10.0.0.1');
    expect(embeddedIPv4('2606:4700::1')).toBeUndefined();
    expect(embeddedIPv4('::1')).toBeUndefined();
  });
});

describe('egress allow rules', () => {
  it('open a host, an address with or without port, and CIDR networks; nothing else', () => {
    const policy = new EgressPolicy('public', ['127.0.0.1:8080', 'internal.test', '10.0.0.0/8', 'fd00::/8:443', '[::1]:9000']);
    expect(policy.refusal('127.0.0.1', 8080, '127.0.0.1')).toBeUndefined();
    expect(policy.refusal('127.0.0.1', 8081, '127.0.0.1')).toMatch(/loopback/);
    expect(policy.refusal('localhost', 8080, '::ffff:127.0.0.1')).toBeUndefined();
    expect(policy.refusal('internal.test', 1, '192.168.0.9')).toBeUndefined();
    expect(policy.refusal('other.test', 80, '192.168.0.9')).toBe('other.test resolves to 192.168.0.9, a private address');
    expect(policy.refusal('10.2.3.4', 22, '10.2.3.4')).toBeUndefined();
    expect(policy.refusal('x', 443, 'fd00::5')).toBeUndefined();
    expect(policy.refusal('x', 80, 'fd00::5')).toMatch(/private/);
    expect(policy.refusal('::1', 9000, '::1')).toBeUndefined();
    expect(policy.refusal('example.com', 443, '93.184.215.14')).toBeUndefined();
    expect(new EgressPolicy('all').refusal('127.0.0.1', 1, '127.0.0.1')).toBeUndefined();
  });

  it.each(['', 'host:0', 'host:99999', '10.0.0.0/33', 'a b', 'user@host'])('"%s" is refused as a rule', (rule) => {
    expect(() => parseAllowRule(rule)).toThrow(/--egress-allow/);
  });

  it('a bad rule fails the service at construction with invalid_argument', () => {
    expect(() => new BrowserService({ logger: silentLogger(), egressAllow: ['10.0.0.0/99'] })).toThrow(/--egress-allow/);
  });
});

describe('egress policy "public" with the browser', () => {
  let internal: Awaited<ReturnType<typeof startInternalServer>>;
  let site: Awaited<ReturnType<typeof startAttackSite>>;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let lib: BrowserSessions;
  let session: BrowserSession;
  let closedPort: number;

  beforeAll(async () => {
    internal = await startInternalServer();
    [site, silent, closedPort] = await Promise.all([startAttackSite(internal.port), startSilentServer(), pickClosedPort()]);
    lib = new BrowserSessions({
      logger: silentLogger(),
      env: {},
      egressPolicy: 'public',
      egressAllow: [`127.0.0.1:${site.port}`, `127.0.0.1:${silent.port}`, `127.0.0.1:${closedPort}`],
      outboundTimeoutMs: 1_500,
    });
    session = await lib.startSession();
  });
  afterAll(async () => {
    await lib?.close();
    await Promise.all([internal?.close(), site?.close(), silent?.close()]);
  });

  it('a page on an allowed site reaches nothing internal (frame, images, encoded IPs, fetch, XHR, WebSocket, service worker), and says so as blocked events', async () => {
    const outcome = await lib.service.run(navigateOperation, OWNER, session.id, { url: `${site.origin}/attack.html` });
    expect(outcome.result?.status).toBe(200);
    const page = lib.service.sessions.get(session.id, OWNER).page;
    expect(await page.evaluate('window.results')).toEqual(['failed', 'failed', 'failed', 'sw:failed']);
    const images = await page.$$eval('img', (imgs) => imgs.map((img) => (img as HTMLImageElement).dataset.failed ?? 'not failed'));
    expect(images).toEqual(encodedTargets(internal.port).map(() => '1'));
    expect(internal.connections).toBe(0);

    const blocked = [...outcome.pageEvents, ...lib.service.sessions.get(session.id, OWNER).log.takeUnreported()].filter(
      (event: PageEvent) => event.type === 'blocked',
    );
    expect(blocked.length).toBeGreaterThan(0);
    const total = blocked.reduce((sum, event) => sum + (event.count ?? 0), 0);
    // iframe, 8 images (127.0.0.2 included), fetch, XHR, WebSocket, the worker's fetch
    expect(total).toBeGreaterThanOrEqual(13);
    expect(blocked[0]!.message).toMatch(new RegExp(`refused by the egress policy "public".*127\\.0\\.0\\.1:${internal.port}`));
    expect(session.info().recentEvents.some((event) => event.type === 'blocked')).toBe(true);
  });

  it('a WebSocket to the allowed site works through the proxy (a CONNECT tunnel), both ways, and nothing is blocked', async () => {
    const before = site.webSocketUpgrades;
    const outcome = await lib.service.run(navigateOperation, OWNER, session.id, { url: `${site.origin}/websocket.html` });
    expect(outcome.result?.status).toBe(200);
    const page = lib.service.sessions.get(session.id, OWNER).page;
    // The page sent "ping" over the socket and got the site's answer back through the tunnel.
    expect(await page.evaluate('window.reply')).toBe('echo:ping');
    expect(site.webSocketUpgrades).toBe(before + 1);
    const later = lib.service.sessions.get(session.id, OWNER).log.takeUnreported();
    expect([...outcome.pageEvents, ...later].filter((event) => event.type === 'blocked')).toEqual([]);
  });

  it("the session's proxy serves only its own browser context: another local client is answered 407, plain and CONNECT", async () => {
    const egress = contextEgress(lib.service.sessions.get(session.id, OWNER))!;
    const proxy = new URL(egress.proxy.url);
    const ask = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(proxy.port), proxy.hostname, () => socket.write(request));
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
        socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
      });
    const target = `127.0.0.1:${site.port}`;
    const wrong = `Proxy-Authorization: Basic ${Buffer.from('session:guess').toString('base64')}\r\n`;
    for (const request of [
      `GET http://${target}/attack.html HTTP/1.1\r\nHost: ${target}\r\nConnection: close\r\n\r\n`,
      `GET http://${target}/attack.html HTTP/1.1\r\nHost: ${target}\r\n${wrong}Connection: close\r\n\r\n`,
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`,
      `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${wrong}\r\n`,
    ]) {
      const answer = await ask(request);
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 407 Proxy Authentication Required');
      expect(answer).toMatch(/proxy-authenticate: Basic/i);
    }
    // The browser context itself still goes through it.
    const outcome = await lib.service.run(navigateOperation, OWNER, session.id, { url: `${site.origin}/websocket.html` });
    expect(outcome.result?.status).toBe(200);
  });

  it('navigate to every internal form is url_not_allowed naming the policy and the flag', async () => {
    const forms = [
      `http://127.0.0.1:${internal.port}/`,
      `http://localhost:${internal.port}/`,
      `http://[::ffff:127.0.0.1]:${internal.port}/`,
      `http://0x7f000001:${internal.port}/`,
      `http://2130706433:${internal.port}/`,
      `http://127.1:${internal.port}/`,
      `http://127.0.0.2:${internal.port}/`,
      `http://[::1]:${internal.port}/`,
      `https://127.0.0.1:${internal.port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[fd00::1]/',
    ];
    for (const url of forms) {
      const error = await rejection(session.navigate(url));
      expect(error.code, url).toBe('url_not_allowed');
      expect(error.status).toBe(400);
      expect(error.message).toMatch(/egress policy "public"/);
      expect(error.message).toMatch(/--egress-allow/);
    }
    expect(internal.connections).toBe(0);
    // The session still works after the refusals.
    expect((await session.navigate(`${site.origin}/ok`)).data.result?.status).toBe(200);
  });

  it('a redirect from an allowed page to an internal address ends that navigate as url_not_allowed', async () => {
    const to = `http://127.0.0.1:${internal.port}/secret`;
    const error = await rejection(session.navigate(`${site.origin}/redirect?to=${encodeURIComponent(to)}`));
    expect(error.code).toBe('url_not_allowed');
    expect(error.message).toContain(`redirected to ${to}`);
    expect(internal.connections).toBe(0);
  });

  it('an allowed target that refuses connections is still navigation_failed with the reason, not a proxy error', async () => {
    const error = await rejection(session.navigate(`http://127.0.0.1:${closedPort}/`));
    expect(error.code).toBe('navigation_failed');
    expect(error.message).toMatch(/refused the connection/);
  });

  it('a model baseURL at an internal address is model_error saying the egress policy refused it', async () => {
    const error = await rejection(
      lib.service.run(extractOperation, OWNER, session.id, {
        instruction: 'What is on the page?',
        modelName: 'openai/gpt-test',
        modelClientOptions: { apiKey: 'k', baseURL: `http://127.0.0.1:${internal.port}/v1`, maxRetries: 0 },
      }),
    );
    expect(error.code).toBe('model_error');
    expect(error.message).toMatch(/refused by the egress policy "public".*loopback/);
    expect(internal.connections).toBe(0);
  });

  it('an integration URL at an internal address is integration_error saying the egress policy refused it', async () => {
    const agent = session.agent({
      provider: 'openai',
      model: 'gpt-test',
      options: { apiKey: 'k', baseURL: `${site.origin}/v1`, maxRetries: 0 },
      integrations: [`http://localhost:${internal.port}/mcp`],
    });
    const error = await rejection(agent.execute('Use the tools.'));
    expect(error.code).toBe('integration_error');
    expect(error.message).toMatch(/refused by the egress policy "public"/);
    expect(internal.connections).toBe(0);
  });

  it('an integration that accepts the connection and never answers fails within the outbound bound', async () => {
    const started = performance.now();
    const agent = session.agent({
      provider: 'openai',
      model: 'gpt-test',
      options: { apiKey: 'k', baseURL: `${site.origin}/v1`, maxRetries: 0 },
      integrations: [`http://127.0.0.1:${silent.port}/mcp`],
    });
    const error = await rejection(agent.execute('Use the tools.'));
    const ms = performance.now() - started;
    expect(error.code).toBe('integration_error');
    expect(error.message).toMatch(/sent no response in time/);
    // Two attempts (streamable HTTP, then SSE) of 1.5 s each; it took 316 s before the bound existed.
    expect(ms).toBeLessThan(10_000);
  });
});

describe('a refused model URL', () => {
  it.each(['openai', 'anthropic'] as const)('%s: fails at the first refusal, without the SDK retrying it', async (provider) => {
    const internal = await startInternalServer();
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const egress = new Egress({ egressPolicy: 'public', logger });
    try {
      // maxRetries 5 would retry a failed connection five times, with back-off (about 15 s); a refusal must not be.
      const options = { apiKey: 'k', baseURL: `http://127.0.0.1:${internal.port}/v1`, maxRetries: 5 };
      const llm = createModelClient(`${provider}/test-model`, options, { env: {}, egress });
      const error = await rejection(llm.chat({ messages: [{ role: 'user', content: 'hi' }] }));
      expect(error.code).toBe('model_error');
      expect(error.message).toMatch(/not contacted: its address is refused by the egress policy "public".*loopback/);
      expect(lines.filter((line) => line.includes('egress refused an outbound request'))).toHaveLength(1);
      expect(internal.connections).toBe(0);
    } finally {
      await egress.close();
      await internal.close();
    }
  });
});

describe('egress defaults of the doors', () => {
  it('HTTP with API keys on loopback defaults to "public": navigate to 127.0.0.1 is a 400 url_not_allowed', async () => {
    const internal = await startInternalServer();
    const server = await startHttp({ apiKeys: ['key-a'] }, new BrowserService({ logger: silentLogger() }));
    try {
      expect(server.service.egress.policy.name).toBe('public');
      const start = await api(server.url, 'POST', '/v1/sessions/start', { key: 'key-a', body: {} });
      const nav = await api(server.url, 'POST', `/v1/sessions/${start.json.data.id}/navigate`, {
        key: 'key-a',
        body: { url: `http://127.0.0.1:${internal.port}/` },
      });
      expect(nav.status).toBe(400);
      expect(nav.json.error.code).toBe('url_not_allowed');
      expect(nav.json.error.message).toMatch(/--egress-policy all/);
      expect(internal.connections).toBe(0);
    } finally {
      await server.close();
      await internal.close();
    }
  });

  it('key-less loopback HTTP and the library default to "all": localhost keeps working', async () => {
    const internal = await startInternalServer();
    const server = await startHttp({}, new BrowserService({ logger: silentLogger() }));
    try {
      expect(new BrowserService({ logger: silentLogger() }).egress.policy.name).toBe('all');
      expect(server.service.egress.policy.name).toBe('all');
      const start = await api(server.url, 'POST', '/v1/sessions/start', { body: {} });
      const nav = await api(server.url, 'POST', `/v1/sessions/${start.json.data.id}/navigate`, {
        body: { url: `http://localhost:${internal.port}/` },
      });
      expect(nav.status).toBe(200);
      expect(nav.json.data.result.status).toBe(200);
      expect(internal.connections).toBeGreaterThan(0);
    } finally {
      await server.close();
      await internal.close();
    }
  });

  it('the CLI: --transport http with --api-key serves with "public", --egress-policy all overrides it, a bad --egress-allow exits 2', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--transport', 'http', '--port', '0', ...args], {
          cwd: ROOT,
          env: { ...process.env, LOG_LEVEL: 'info', SVC_API_KEYS: '' },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        // A hang guard only, just under the test's own bound: on a machine loaded to 40+ tsx alone took over 50 s to
        // start the server, and a guard that fired first left nothing to assert on but an empty log.
        const timer = setTimeout(() => child.kill('SIGTERM'), 230_000);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk;
          if (/HTTP server listening/.test(stderr)) child.kill('SIGTERM');
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
    const [keyed, overridden, bad] = await Promise.all([
      run(['--api-key', 'key-a']),
      run(['--api-key', 'key-a', '--egress-policy', 'all']),
      run(['--egress-allow', '10.0.0.0/99']),
    ]);
    expect(keyed.stderr).toMatch(/"egress":"public".*HTTP server listening/);
    expect(overridden.stderr).toMatch(/"egress":"all".*HTTP server listening/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--egress-allow "10.0.0.0/99"');
  }, 240_000);
});
