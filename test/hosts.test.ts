import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHROMIUM_ARGS, findBrowserExecutable } from '../src/core/browser.js';
import { ServiceError } from '../src/core/errors.js';
import { missingFlags } from '../src/core/hosts/remote.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { ServiceConfig } from '../src/core/config.js';
import { closedPort, startCdpBrowser, startRunServer, TEST_LAUNCH_OPTIONS, type HostProcess } from './fixtures/browser-hosts.js';
import { latestPage, refOf } from './agent-fixtures.js';
import { startFakeLLM, type FakeLLM } from './fixtures/fake-llm.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { LOCAL_OWNER } from '../src/door.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import {
  actOperation,
  agentExecuteOperation,
  extractOperation,
  navigateOperation,
  observeOperation,
  screenshotOperation,
} from '../src/core/operations/index.js';

// Sessions on a pool of real browser hosts on loopback: playwright-core run-server processes and a CDP Chromium.
const OWNER = 'pool-test';
let site: SiteServer;
let fake: FakeLLM;
const hosts: HostProcess[] = [];
const services: BrowserService[] = [];
const servers: TestHttp[] = [];
// Two Playwright servers and a CDP browser, shared by the tests that do not kill a host.
let a: HostProcess;
let b: HostProcess;
let cdp: HostProcess;

function pooled(config: Partial<ServiceConfig>): BrowserService {
  const service = new BrowserService({ logger: silentLogger(), remoteLaunchOptions: TEST_LAUNCH_OPTIONS, ...config });
  services.push(service);
  return service;
}

async function host(start: () => Promise<HostProcess>): Promise<HostProcess> {
  const started = await start();
  hosts.push(started);
  return started;
}

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const err = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(err).toBeInstanceOf(ServiceError);
  return err as ServiceError;
}

beforeAll(async () => {
  [site, fake, a, b, cdp] = await Promise.all([
    startSiteServer(),
    startFakeLLM(),
    host(startRunServer),
    host(startRunServer),
    host(startCdpBrowser),
  ]);
});

afterAll(async () => {
  await Promise.allSettled(servers.map((server) => server.http.close()));
  await Promise.allSettled(services.map((service) => service.close()));
  await Promise.allSettled(hosts.map((entry) => entry.kill()));
  await Promise.allSettled([site?.close(), fake?.close()]);
});

describe('a pool of browser hosts', () => {
  it('spreads sessions over the hosts, skips one that cannot be reached, and says where each runs without credentials', async () => {
    const dead = `ws://127.0.0.1:${await closedPort()}/`;
    const withSecrets = a.url.replace('ws://', 'ws://alice:pa55word@') + '?token=s3cret-token';
    const service = pooled({ playwrightEndpoints: [withSecrets, b.url, dead], cdpEndpoints: [cdp.url] });

    const started = await Promise.all(Array.from({ length: 6 }, () => service.startSession(OWNER)));
    const names = [`ws://127.0.0.1:${a.port}`, `ws://127.0.0.1:${b.port}`, `http://127.0.0.1:${cdp.port}`];
    const perHost = names.map((name) => started.filter((info) => info.host === name).length);
    expect(perHost).toEqual([2, 2, 2]);
    expect(started.every((info) => info.state === 'open')).toBe(true);

    const status = service.browser.status();
    expect(status.hosts.map((entry) => [entry.name, entry.state])).toEqual([
      [names[0], 'up'],
      [names[1], 'up'],
      [dead.replace(/\/$/, ''), 'down'],
      [names[2], 'up'],
    ]);
    expect(status.up).toBe(3);
    const listed = JSON.stringify({ list: service.listSessions(OWNER), status });
    expect(listed).not.toMatch(/s3cret|pa55word|alice/);

    // Our Chromium flags (no background networking, component updates, ...) reach the browsers run-server launches.
    for (const pooledHost of service.browser.hosts.slice(0, 2))
      expect(await missingFlags(await pooledHost.browser(), DEFAULT_CHROMIUM_ARGS)).toEqual([]);

    // Every host runs real pages that reach the site server.
    for (const info of started.slice(0, 3)) {
      const { result } = await service.run(navigateOperation, OWNER, info.id, { url: site.url('/index.html') });
      expect(result?.status).toBe(200);
    }
    await Promise.all(started.map((info) => service.endSession(OWNER, info.id)));
    expect(service.browser.status().hosts.map((entry) => entry.sessions)).toEqual([0, 0, 0, 0]);
  });

  it('runs the whole feature set on a pooled session: page text with closed shadow roots and iframes, dialogs, popups, extract with a model, the agent, observe, act and screenshot', async () => {
    fake.reset();
    const service = pooled({
      playwrightEndpoints: [a.url],
      model: 'openai/gpt-4.1-mini',
      env: { OPENAI_API_KEY: 'sk-pool-test', OPENAI_BASE_URL: fake.openaiBaseURL },
    });
    const { id, host: where } = await service.startSession(OWNER);
    expect(where).toBe(`ws://127.0.0.1:${a.port}`);

    await service.run(navigateOperation, OWNER, id, { url: site.url('/pages/shadow.html') });
    const shadow = (await service.run(extractOperation, OWNER, id, {})).result as { pageText: string };
    expect(shadow.pageText).toContain('Text inside a closed shadow root.');
    await service.run(navigateOperation, OWNER, id, { url: site.url('/pages/frames-same.html') });
    const framed = (await service.run(extractOperation, OWNER, id, { iframes: true })).result as { pageText: string };
    expect(framed.pageText).toContain('Weekly news from inside the frame.');

    const dialogs = await service.run(navigateOperation, OWNER, id, { url: site.url('/dialogs.html') });
    expect(dialogs.pageEvents.map((event) => event.type)).toEqual(['dialog', 'dialog']);
    await service.run(navigateOperation, OWNER, id, { url: site.url('/popup.html') });
    await expect
      .poll(() => service.getSession(OWNER, id).recentEvents.some((event) => event.type === 'popup'), { timeout: 5_000 })
      .toBe(true);

    fake.enqueue({ json: { heading: 'A page that opens a window' } });
    const schema = { type: 'object', properties: { heading: { type: 'string' } }, required: ['heading'] };
    const extracted = await service.run(extractOperation, OWNER, id, { instruction: 'the main heading', schema });
    expect(extracted.result).toEqual({ heading: 'A page that opens a window' });
    expect(JSON.stringify(fake.requests[0]!.body)).toContain('A page that opens a window');

    // The agent acts on the remote page by refs: it signs in and reads what the next page says.
    fake.enqueue(
      { toolCalls: [{ name: 'goto', arguments: { url: site.url('/agent/login.html') } }] },
      (request) => ({
        toolCalls: [
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Username/), value: 'alice' } },
          { name: 'act', arguments: { method: 'fill', ref: refOf(request, /Password/), value: '%password%' } },
          { name: 'act', arguments: { method: 'press', ref: refOf(request, /Password/), key: 'Enter' } },
        ],
      }),
      (request) => ({
        toolCalls: [
          { name: 'done', arguments: { success: true, message: /Account balance: (.+)/.exec(latestPage(request))?.[1] ?? 'none' } },
        ],
      }),
    );
    const agent = await service.run(agentExecuteOperation, OWNER, id, {
      agentConfig: {
        provider: 'openai',
        model: 'gpt-4.1-mini',
        options: { apiKey: 'sk-pool-test', baseURL: fake.openaiBaseURL, maxRetries: 0 },
      },
      executeOptions: {
        instruction: 'Sign in as alice with %password% and read the balance.',
        variables: { password: 'correct horse battery' },
      },
    });
    expect(agent.result).toMatchObject({ success: true, completed: true, message: expect.stringContaining('4,217.93 EUR') });

    // A client's own model drives the remote page: observe, act by its refs, and look at it.
    await service.run(navigateOperation, OWNER, id, { url: site.url('/agent/login.html') });
    const { actions } = (await service.run(observeOperation, OWNER, id, {})).result;
    const field = (label: RegExp) => actions.find((action) => action.method === 'fill' && label.test(action.description))!;
    await service.run(actOperation, OWNER, id, { action: { ...field(/Username/), arguments: { value: 'alice' } } });
    await service.run(actOperation, OWNER, id, { action: { ...field(/Password/), arguments: { value: 'correct horse battery' } } });
    const submit = actions.find((action) => action.method === 'click' && /Sign in/i.test(action.description))!;
    const signedIn = await service.run(actOperation, OWNER, id, { action: submit });
    expect(signedIn.result).toMatchObject({ navigated: true, pageText: expect.stringContaining('4,217.93 EUR') });
    const shot = (await service.run(screenshotOperation, OWNER, id, { format: 'png' })).result;
    expect([...shot.bytes.subarray(1, 4)].map((byte) => String.fromCharCode(byte)).join('')).toBe('PNG');
    expect({ width: shot.info.width, height: shot.info.height }).toEqual({ width: 1280, height: 800 });
  });

  it('a host that dies: its sessions fail fast with browser_unavailable and are listed as lost; new sessions go elsewhere; it takes sessions again once back', async () => {
    const doomed = await host(startRunServer);
    const survivor = b;
    const doomedName = `ws://127.0.0.1:${doomed.port}`;
    const http: TestHttp = await startHttp({}, pooled({ playwrightEndpoints: [doomed.url, survivor.url] }));
    servers.push(http);
    const { service } = http;
    // The REST door's owner when no API keys are configured, so both doors see the same sessions.
    const owner = LOCAL_OWNER;
    const [onDoomed, onSurvivor] = await Promise.all([service.startSession(owner), service.startSession(owner)].map((p) => p));
    const [lostInfo, keptInfo] = onDoomed!.host === doomedName ? [onDoomed!, onSurvivor!] : [onSurvivor!, onDoomed!];
    expect(lostInfo.host).toBe(doomedName);
    expect(keptInfo.host).not.toBe(doomedName);

    // A navigation that would wait 60 s is in flight when the host goes.
    const inFlight = failure(service.run(navigateOperation, owner, lostInfo.id, { url: site.url('/hang'), options: { timeout: 60_000 } }));
    await expect.poll(() => site.requests.some((request) => request.url === '/hang'), { timeout: 10_000 }).toBe(true);
    const killedAt = Date.now();
    await doomed.kill();
    const err = await inFlight;
    expect(err.code).toBe('browser_unavailable');
    expect(err.message).toContain(doomedName);
    expect(Date.now() - killedAt).toBeLessThan(5_000);

    const again = await failure(service.run(navigateOperation, owner, lostInfo.id, { url: site.url('/index.html') }));
    expect(again.code).toBe('browser_unavailable');
    const rest = await api(http.url, 'POST', `/v1/sessions/${lostInfo.id}/navigate`, { body: { url: site.url('/index.html') } });
    expect(rest.status).toBe(503);
    expect(rest.json.error.code).toBe('browser_unavailable');
    const states = Object.fromEntries(service.listSessions(owner).map((info) => [info.id, info.state]));
    expect(states).toEqual({ [lostInfo.id]: 'lost', [keptInfo.id]: 'open' });
    expect((await api(http.url, 'GET', '/v1/sessions')).json.data.sessions.find((s: { id: string }) => s.id === lostInfo.id).state).toBe(
      'lost',
    );

    // The other host's session works on, and new sessions land there.
    expect((await service.run(navigateOperation, owner, keptInfo.id, { url: site.url('/page2.html') })).result?.status).toBe(200);
    const fresh = await service.startSession(owner);
    expect(fresh.host).toBe(keptInfo.host);
    expect(service.browser.status().hosts.find((entry) => entry.name === doomedName)?.state).toBe('down');

    // A lost session ends cleanly.
    await service.endSession(owner, lostInfo.id);
    expect(service.listSessions(owner).map((info) => info.id)).not.toContain(lostInfo.id);

    // Back on the same port: the pool reconnects by itself and places the next session there (it has the fewest).
    const revived = await host(() => startRunServer(doomed.port));
    expect(revived.port).toBe(doomed.port);
    await expect
      .poll(() => service.browser.status().hosts.find((entry) => entry.name === doomedName)?.state, { timeout: 15_000 })
      .toBe('up');
    const placedBack = await service.startSession(owner);
    expect(placedBack.host).toBe(doomedName);
    expect((await service.run(navigateOperation, owner, placedBack.id, { url: site.url('/index.html') })).result?.status).toBe(200);
  });

  it('with no host reachable, session_start answers browser_unavailable naming every host tried', async () => {
    const ports = await Promise.all([closedPort(), closedPort()]);
    const service = pooled({
      playwrightEndpoints: [`ws://bob:hunter22@127.0.0.1:${ports[0]}/?token=zz-secret-token`],
      cdpEndpoints: [`http://127.0.0.1:${ports[1]}`],
    });
    const err = await failure(service.startSession(OWNER));
    expect(err.code).toBe('browser_unavailable');
    expect(err.status).toBe(503);
    expect(err.message).toContain(`ws://127.0.0.1:${ports[0]}`);
    expect(err.message).toContain(`http://127.0.0.1:${ports[1]}`);
    expect(JSON.stringify({ message: err.message, details: err.details })).not.toMatch(/hunter22|zz-secret-token|bob/);
    expect(service.listSessions(OWNER)).toEqual([]);
  });
});

describe("reading a host browser's flags", () => {
  it('names the flags of ours a browser was started without (none when it has them), in the headless shell and in the full Chromium', async () => {
    const browsers = [findBrowserExecutable(undefined)!.path, '/usr/bin/chromium'].filter((path, i) => i === 0 || existsSync(path));
    for (const executablePath of new Set(browsers)) {
      for (const args of [DEFAULT_CHROMIUM_ARGS, ['--no-sandbox']]) {
        const browser = await chromium.launch({ executablePath, args });
        try {
          const missing = await missingFlags(browser, DEFAULT_CHROMIUM_ARGS);
          const label = `${executablePath} ${args.join(' ')}`;
          if (args === DEFAULT_CHROMIUM_ARGS) expect(missing, label).toEqual([]);
          // Flags Playwright does not add itself; a headless shell started without ours cannot tell its command line,
          // and is said to lack all of them.
          else expect(missing, label).toEqual(expect.arrayContaining(['--disable-renderer-accessibility', '--enable-automation']));
        } finally {
          await browser.close();
        }
      }
    }
  });
});

describe('readiness for load balancers (GET /healthz)', () => {
  it('answers 200 while a host can take a session and 503 when none can, without a key and without credentials or error text', async () => {
    const dead = `ws://carol:t0psecret@127.0.0.1:${await closedPort()}/?token=zz-health-token`;
    const http = await startHttp({ apiKeys: ['health-test-key'] }, pooled({ playwrightEndpoints: [b.url, dead], sessionsPerHost: 1 }));
    servers.push(http);
    const names = [`ws://127.0.0.1:${b.port}`, dead.replace(/^ws:\/\/carol:t0psecret@/, 'ws://').replace(/\/\?token=.*$/, '')];

    // Hosts connect at their first session; a readiness check starts connecting those never tried, so checks soon tell.
    const first = await api(http.url, 'GET', '/healthz');
    expect(first.status).toBe(200);
    await expect
      .poll(async () => (await api(http.url, 'GET', '/healthz')).json.data.hosts.map((host: { state: string }) => host.state), {
        timeout: 20_000,
      })
      .toEqual(['up', 'down']);
    const ready = await api(http.url, 'GET', '/healthz');
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({
      success: true,
      data: {
        status: 'ok',
        version: expect.any(String),
        hosts: [
          { name: names[0], state: 'up', sessions: 0, capacityLeft: 1, accepting: true },
          { name: names[1], state: 'down', sessions: 0, capacityLeft: 1, accepting: false },
        ],
        capacityLeft: 1,
      },
    });

    // The one healthy host is full: no new session can start here, so the load balancer should send them elsewhere.
    const started = await api(http.url, 'POST', '/v1/sessions/start', { key: 'health-test-key' });
    expect(started.status).toBe(200);
    const full = await api(http.url, 'GET', '/healthz');
    expect(full.status).toBe(503);
    expect(full.json.success).toBe(false);
    expect(full.json.error.code).toBe('browser_unavailable');
    expect(full.json.error.details).toMatchObject({
      status: 'unavailable',
      capacityLeft: 0,
      hosts: [
        { name: names[0], state: 'up', sessions: 1, capacityLeft: 0, accepting: false },
        { name: names[1], state: 'down', accepting: false },
      ],
    });
    for (const body of [ready.json, full.json]) expect(JSON.stringify(body)).not.toMatch(/carol|t0psecret|zz-health-token|ECONNREFUSED/);

    // Room again once the session ends.
    await api(http.url, 'POST', `/v1/sessions/${started.json.data.id}/end`, { key: 'health-test-key' });
    expect((await api(http.url, 'GET', '/healthz')).status).toBe(200);
  });

  it('answers 503 once every host is found down', async () => {
    const http = await startHttp({}, pooled({ cdpEndpoints: [`http://127.0.0.1:${await closedPort()}`] }));
    servers.push(http);
    await expect.poll(async () => (await api(http.url, 'GET', '/healthz')).status, { timeout: 20_000 }).toBe(503);
    const down = await api(http.url, 'GET', '/healthz');
    expect(down.json.error).toMatchObject({
      code: 'browser_unavailable',
      details: { status: 'unavailable', capacityLeft: 0, hosts: [{ state: 'down', accepting: false }] },
    });
  });
});

describe('the egress policy on browser hosts', () => {
  it('"public" on a loopback Playwright host: contexts go through the egress proxy and the host launches with the proxy-only flags', async () => {
    fake.reset();
    const service = pooled({ playwrightEndpoints: [a.url], egressPolicy: 'public', egressAllow: [new URL(site.origin).host] });
    const { id } = await service.startSession(OWNER);
    expect((await service.run(navigateOperation, OWNER, id, { url: site.url('/index.html') })).result?.status).toBe(200);

    // An internal address the policy does not allow (the fake model server on 127.0.0.1): refused by the proxy.
    const page = service.sessions.get(id, OWNER).page;
    const reached = await page.evaluate(
      (url) =>
        fetch(url, { mode: 'no-cors' }).then(
          () => 'reached',
          () => 'failed',
        ),
      `${fake.origin}/`,
    );
    expect(reached).toBe('failed');
    expect(fake.requests).toHaveLength(0);
    await expect
      .poll(() => service.getSession(OWNER, id).recentEvents.some((event) => event.type === 'blocked'), { timeout: 5_000 })
      .toBe(true);

    // Without QUIC and non-proxied WebRTC UDP, nothing leaves around the proxy.
    expect(await missingFlags(await service.browser.hosts[0]!.browser(), service.egress.browserArgs())).toEqual([]);
    expect(service.egress.browserArgs().length).toBeGreaterThan(0);
  });

  it('"public" with a browser host on another machine: refused before serving, naming the way out; "all" starts', async () => {
    const elsewhere = { playwrightEndpoints: ['ws://browsers.example.invalid:3000/'] };
    const refused = await failure(startHttp({ apiKeys: ['egress-key'] }, pooled(elsewhere)));
    expect(refused.code).toBe('browser_unavailable');
    expect(refused.message).toContain('browsers.example.invalid');
    expect(refused.message).toContain('--egress-policy all');
    // The library has no door to refuse at: its session_start says the same.
    expect((await failure(pooled({ ...elsewhere, egressPolicy: 'public' }).startSession(OWNER))).message).toContain('--egress-policy all');

    const http = await startHttp({ apiKeys: ['egress-key'] }, pooled({ ...elsewhere, egressPolicy: 'all' }));
    servers.push(http);
    expect((await api(http.url, 'GET', '/healthz')).status).toBe(200);
  });
});
