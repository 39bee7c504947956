import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import type { Session } from '../src/core/sessions.js';
import { MAX_COPIED_CHARS, MAX_VIEWERS_PER_SESSION, type LiveMessage, type LiveViewer } from '../src/core/live/index.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { connectSocketViewer, socketUrl, upgradeStatus, type SocketViewerClient } from './fixtures/live-viewer.js';

// What a viewer may cost the server, and what it may see: viewers that stop reading, pages that stop answering while a
// person holds them, copies and the status of a session that typed a secret.
const fixture = useSiteHttp();
const opened: SocketViewerClient[] = [];

afterAll(() => {
  for (const viewer of opened) viewer.close();
});

async function startSession(at: TestHttp = fixture.server): Promise<string> {
  const started = await api(at.url, 'POST', '/v1/sessions/start', { body: {} });
  expect(started.status).toBe(200);
  return started.json.data.id;
}

async function call(operation: string, id: string, body: unknown, at: TestHttp = fixture.server) {
  const res = await api(at.url, 'POST', `/v1/sessions/${id}/${operation}`, { body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data?.result;
}

async function link(id: string, body: Record<string, unknown> = {}, at: TestHttp = fixture.server): Promise<string> {
  const res = await api(at.url, 'POST', `/v1/sessions/${id}/liveView`, { body });
  expect(res.status).toBe(200);
  return res.json.data.url;
}

async function viewer(url: string): Promise<SocketViewerClient> {
  const client = await connectSocketViewer(url);
  opened.push(client);
  return client;
}

/** The core session behind a REST session id (tests reach its page directly). */
function coreSession(id: string, at: TestHttp = fixture.server): Session {
  const sessions = (at.service.sessions as unknown as { sessions: Map<string, Session> }).sessions;
  return sessions.get(id)!;
}

/** Settles with the promise, or with 'still waiting' after `ms`: a hold that never ends must fail the test, not hang it. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> {
  return Promise.race([promise, new Promise<'still waiting'>((resolve) => setTimeout(resolve, ms, 'still waiting').unref())]);
}

/** A viewer of the hub itself that records what it is sent and never finishes writing a status unless told to. */
function recordingViewer(stalled: boolean) {
  const messages: LiveMessage[] = [];
  let release: (() => void) | undefined;
  const viewer: LiveViewer = {
    interactive: false,
    expiresAt: Date.now() + 60_000,
    sendFrame: (_jpeg, sent) => sent(),
    send: (message, sent) => {
      messages.push(message);
      if (stalled) release = sent;
      else sent?.();
    },
    close: () => undefined,
  };
  return { viewer, messages, flush: () => release?.() };
}

describe('a live viewer that stops reading', { timeout: 60_000 }, () => {
  it('holds one status message in a single slot, not a queue, and gets the newest once it reads again', async () => {
    const id = await startSession();
    await call('navigate', id, { url: fixture.site.url('/live/static.html') });
    const token = new URL(await link(id, { interactive: false })).searchParams.get('token');
    const { hub } = fixture.server.service.live.open(id, token);
    const stalled = recordingViewer(true);
    const reading = recordingViewer(false);
    const detach = [fixture.server.service.live.connect(hub, stalled.viewer), fixture.server.service.live.connect(hub, reading.viewer)];
    const page = coreSession(id).page;
    for (let n = 1; n <= 5; n++) {
      await page.evaluate((step) => history.replaceState(null, '', `?step=${step}`), n);
      await expect.poll(() => reading.messages.some((m) => m.type === 'status' && m.url.endsWith(`?step=${n}`))).toBe(true);
    }
    const statuses = () => stalled.messages.filter((m) => m.type === 'status');
    expect(statuses()).toHaveLength(1);
    expect(hub.statusWaiting(stalled.viewer)).toBe(true);
    stalled.flush();
    expect(statuses()).toHaveLength(2);
    expect(statuses()[1]).toMatchObject({ url: fixture.site.url('/live/static.html?step=5') });
    for (const undo of detach) undo();
    await call('end', id, {});
  });

  it('is dropped once its socket holds more than the limit, and copied text is cut to MAX_COPIED_CHARS', async () => {
    const id = await startSession();
    await call('navigate', id, { url: fixture.site.url('/live/static.html') });
    await coreSession(id).page.evaluate((length) => {
      document.body.textContent = 'x'.repeat(length);
      window.getSelection()!.selectAllChildren(document.body);
    }, MAX_COPIED_CHARS + 100_000);
    const url = await link(id);
    const reader = await viewer(url);
    reader.send({ type: 'copy' });
    const copied = await reader.next((m) => m.type === 'copied');
    expect(copied.text).toHaveLength(MAX_COPIED_CHARS);
    const stalled = await viewer(url);
    expect(fixture.server.service.live.hubOf(id)?.viewerCount).toBe(2);
    stalled.ws.pause();
    // Each answer is a megabyte the viewer never reads: the kernel's buffers take some, the limit the rest.
    for (let n = 0; n < 40; n++) stalled.send({ type: 'copy' });
    await expect.poll(() => fixture.server.service.live.hubOf(id)?.viewerCount, { timeout: 30_000 }).toBe(1);
    // The reading viewer stays.
    reader.send({ type: 'copy' });
    await expect.poll(() => reader.messages.filter((m) => m.type === 'copied').length, { timeout: 15_000 }).toBe(2);
    await call('end', id, {});
  });
});

describe('viewers per session', { timeout: 60_000 }, () => {
  it(`takes ${MAX_VIEWERS_PER_SESSION} and refuses the next with 429 viewer_limit, on the page and its socket`, async () => {
    const id = await startSession();
    await call('navigate', id, { url: fixture.site.url('/live/static.html') });
    const url = await link(id, { interactive: false });
    const viewers = await Promise.all(Array.from({ length: MAX_VIEWERS_PER_SESSION }, () => viewer(url)));
    expect(fixture.server.service.live.hubOf(id)?.viewerCount).toBe(MAX_VIEWERS_PER_SESSION);
    const page = await fetch(url);
    expect(page.status).toBe(429);
    expect(await page.text()).toContain(`already has ${MAX_VIEWERS_PER_SESSION} live viewers`);
    expect(await upgradeStatus(socketUrl(url))).toBe(429);
    viewers[0]!.close();
    await expect.poll(() => fixture.server.service.live.hubOf(id)?.viewerCount).toBe(MAX_VIEWERS_PER_SESSION - 1);
    expect(await upgradeStatus(socketUrl(url))).toBe(101);
    await call('end', id, {});
  });
});

describe('a page that stops answering while a person holds it', { timeout: 90_000 }, () => {
  /** A session on a page whose script never yields once the mouse moves, moved by an interactive viewer's input. */
  async function hungTakeover(at: TestHttp = fixture.server): Promise<{ id: string; person: SocketViewerClient }> {
    const id = await startSession(at);
    await call('navigate', id, { url: fixture.site.url('/live/hang-on-move.html') }, at);
    const person = await viewer(await link(id, {}, at));
    person.send({ type: 'mouse', action: 'move', x: 0.5, y: 0.5 });
    await person.next((m) => m.type === 'status' && m.control === 'person');
    person.send({ type: 'mouse', action: 'move', x: 0.6, y: 0.6 });
    return { id, person };
  }

  it('hands the session back at Done: the next navigate runs on a fresh page', async () => {
    const { id, person } = await hungTakeover();
    person.send({ type: 'done' });
    await person.roundTrip();
    person.close();
    const started = Date.now();
    const answer = api(fixture.server.url, 'POST', `/v1/sessions/${id}/navigate`, {
      body: { url: fixture.site.url('/index.html'), options: { timeout: 10_000 } },
    });
    const res = await within(answer, 40_000);
    expect(res).not.toBe('still waiting');
    if (res === 'still waiting') return;
    expect(res.status).toBe(200);
    expect(res.json.data.result).toMatchObject({ status: 200, url: fixture.site.url('/index.html') });
    expect(Date.now() - started).toBeLessThan(30_000);
    await call('end', id, {});
  });

  it('ends at takeoverTimeoutMs while the person is still connected', async () => {
    const short = await startHttp(
      {},
      new BrowserService({ logger: silentLogger(), egressPolicy: 'all', liveView: { takeoverTimeoutMs: 2_000 } }),
    );
    try {
      const { id } = await hungTakeover(short);
      const answer = api(short.url, 'POST', `/v1/sessions/${id}/navigate`, {
        body: { url: fixture.site.url('/index.html'), options: { timeout: 10_000 } },
      });
      const res = await within(answer, 40_000);
      expect(res).not.toBe('still waiting');
      if (res !== 'still waiting') expect(res.status).toBe(200);
    } finally {
      await short.close();
    }
  });

  it("ends the agent's wait for a person (ask_human) at Done", async () => {
    const id = await startSession();
    await call('navigate', id, { url: fixture.site.url('/live/hang-on-move.html') });
    const session = coreSession(id);
    let askedAt!: (url: string) => void;
    const asked = new Promise<string>((resolve) => (askedAt = resolve));
    const waited = fixture.server.service.operate(session.owner, id, (s) =>
      fixture.server.service.live.askHuman(s, { reason: 'Move the mouse.', timeoutMs: 60_000, notify: (request) => askedAt(request.url) }),
    );
    const person = await viewer(await asked);
    await person.next((m) => m.type === 'status' && m.control === 'person');
    person.send({ type: 'mouse', action: 'move', x: 0.5, y: 0.5 });
    person.send({ type: 'mouse', action: 'move', x: 0.6, y: 0.6 });
    person.send({ type: 'done' });
    expect(
      await within(
        waited.then(() => 'done'),
        30_000,
      ),
    ).toBe('done');
    person.close();
    await call('end', id, {});
  });
});

describe('what a viewer may read', { timeout: 60_000 }, () => {
  const SECRET = 'S3cr!t pw&<x>~(y)';

  it("answers no copy to a watch-only viewer, never a password field's value, and masks the session's secrets in copies and the status", async () => {
    const id = await startSession();
    await call('navigate', id, { url: fixture.site.url('/live/secret.html') });
    const page = coreSession(id).page;
    // Typed as a person would: no variable names it, so only the field's type keeps it from a copy.
    await page.fill('#pw', 'typed by a person');
    await page.locator('#pw').evaluate((input: HTMLInputElement) => (input.focus(), input.select()));

    const watcher = await viewer(await link(id, { interactive: false }));
    const person = await viewer(await link(id));
    watcher.send({ type: 'copy' });
    await watcher.roundTrip();
    person.send({ type: 'copy' });
    expect((await person.next((m) => m.type === 'copied')).text).toBe('');
    // The person's answer came after the watcher's copy reached the server; the watcher's own socket is read past it.
    await watcher.roundTrip();
    expect(watcher.messages.filter((m) => m.type === 'copied')).toEqual([]);

    const { actions } = await call('observe', id, {});
    const password = actions.find((action: { description: string }) => /textbox: Password/.test(action.description));
    await call('act', id, { action: { ...password, arguments: { value: '%pw%' } }, variables: { pw: SECRET } });
    const submit = actions.find((action: { description: string }) => /button: Sign in/.test(action.description));
    await call('act', id, { action: submit });
    expect(page.url()).toContain(new URLSearchParams({ pw: SECRET }).toString());
    const status = await person.next((m) => m.type === 'status' && m.url.includes('secret.html?'));
    const shown = JSON.stringify([status.url, status.tabs]);
    for (const form of [SECRET, encodeURIComponent(SECRET), new URLSearchParams({ v: SECRET }).toString().slice(2)])
      expect(shown).not.toContain(form);
    expect(status.url).toContain('pw=%25pw%25');
    expect(status.tabs[0].url).toBe(status.url);

    await page.evaluate(() => window.getSelection()!.selectAllChildren(document.getElementById('echo')!));
    person.send({ type: 'copy' });
    await expect.poll(() => person.messages.filter((m) => m.type === 'copied').map((m) => m.text)).toEqual(['', 'Signed in with %pw%']);
    await call('end', id, {});
  });
});
