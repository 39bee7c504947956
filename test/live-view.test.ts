import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserSessions } from '../src/client/index.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';
import { clickPagePoint, framePixel, launchViewerBrowser, openViewer, socketUrl, upgradeStatus } from './fixtures/live-viewer.js';

// The live view over the HTTP door: a real Chromium opens the link, sees the session's frames and drives its page.
const KEY_A = 'live-key-a';
const KEY_B = 'live-key-b';
let site: SiteServer;
let http: TestHttp;
let viewers: Browser;

beforeAll(async () => {
  [site, http, viewers] = await Promise.all([startSiteServer(), startHttp({ apiKeys: [KEY_A, KEY_B] }), launchViewerBrowser()]);
});

afterAll(async () => {
  await viewers?.close();
  await http?.close();
  await site?.close();
});

async function startSession(key = KEY_A): Promise<string> {
  const started = await api(http.url, 'POST', '/v1/sessions/start', { key, body: {} });
  expect(started.status).toBe(200);
  return started.json.data.id;
}

async function navigate(id: string, path: string): Promise<void> {
  const res = await api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { key: KEY_A, body: { url: site.url(path) } });
  expect(res.status).toBe(200);
}

async function liveView(id: string, body: Record<string, unknown> = {}, key = KEY_A) {
  return api(http.url, 'POST', `/v1/sessions/${id}/liveView`, { key, body });
}

async function pageText(id: string): Promise<string> {
  const res = await api(http.url, 'POST', `/v1/sessions/${id}/extract`, { key: KEY_A, body: {} });
  expect(res.status).toBe(200);
  return res.json.data.result.pageText;
}

describe('live view over HTTP', { timeout: 120_000 }, () => {
  it('answers a signed link to /live/{id} that expires in 15 minutes by default', async () => {
    const id = await startSession();
    const res = await liveView(id);
    expect(res.status).toBe(200);
    const { url, expiresAt, interactive } = res.json.data;
    expect(interactive).toBe(true);
    expect(new URL(url).origin).toBe(http.url);
    expect(new URL(url).pathname).toBe(`/live/${id}`);
    expect(url).not.toContain(KEY_A);
    const lifetime = Date.parse(expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(14 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
  });

  it('shows the session page in the viewer and the frames change when the session navigates', async () => {
    const id = await startSession();
    await navigate(id, '/live/red.html');
    const viewer = await openViewer(viewers, (await liveView(id, { interactive: false })).json.data.url);
    await expect.poll(async () => (await framePixel(viewer, 0.5, 0.9))[0], { timeout: 15_000 }).toBeGreaterThan(200);
    expect((await framePixel(viewer, 0.5, 0.9))[1]).toBeLessThan(60);
    await navigate(id, '/live/static.html');
    await expect.poll(async () => framePixel(viewer, 0.5, 0.9), { timeout: 15_000 }).toEqual([255, 255, 255]);
    await expect.poll(() => viewer.locator('#url').textContent()).toBe(site.url('/live/static.html'));
    await viewer.close();
  });

  it('keeps the page aspect ratio whatever the viewer size', async () => {
    const id = await startSession();
    await navigate(id, '/live/red.html');
    const viewer = await openViewer(viewers, (await liveView(id)).json.data.url, { width: 500, height: 900 });
    const box = (await viewer.locator('#screen').boundingBox())!;
    expect(box.width / box.height).toBeCloseTo(1280 / 800, 1);
    await viewer.close();
  });

  it('clicks, typing, Backspace, paste and copy through an interactive viewer reach the session page and back', async () => {
    const id = await startSession();
    await navigate(id, '/live/form.html');
    const viewer = await openViewer(viewers, (await liveView(id)).json.data.url);
    const session = http.service.sessions.get(id, sessionOwner(id));
    // The person holds the page from their first input until Done: operations (extract included) wait meanwhile.
    await clickPagePoint(viewer, 250, 160);
    await expect.poll(() => session.page.textContent('#clicks'), { timeout: 15_000 }).toBe('Clicked 1 times');
    await clickPagePoint(viewer, 300, 320);
    await viewer.keyboard.type('Adax');
    await viewer.keyboard.press('Backspace');
    await viewer.evaluate(() => {
      const data = new DataTransfer();
      data.setData('text/plain', ' Lovelace');
      document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data }));
    });
    await expect.poll(() => session.page.inputValue('#name'), { timeout: 15_000 }).toBe('Ada Lovelace');
    // Copy: the selection in the session's page (here the field's last word) lands on the viewer's clipboard. The
    // viewer's clipboard writes are recorded instead of reaching the system clipboard, which headless Chromium guards.
    await session.page.locator('#name').evaluate((input: HTMLInputElement) => input.setSelectionRange(4, 12));
    await viewer.evaluate(() => {
      navigator.clipboard.writeText = async (text: string) => void (document.body.dataset.clipboard = text);
    });
    await viewer.locator('#screen').focus();
    await viewer.evaluate(() => document.dispatchEvent(new ClipboardEvent('copy', { clipboardData: new DataTransfer() })));
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.clipboard), { timeout: 15_000 }).toBe('Lovelace');
    expect(await viewer.evaluate(() => document.body.dataset.control)).toBe('person');
    await viewer.locator('#done').click();
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control)).toBe('none');
    const text = await pageText(id);
    expect(text).toContain('Clicked 1 times');
    expect(text).toContain('Ada Lovelace');
    await viewer.close();
  });

  it("ignores a read-only viewer's clicks and keys", async () => {
    const id = await startSession();
    await navigate(id, '/live/form.html');
    const viewer = await openViewer(viewers, (await liveView(id, { interactive: false })).json.data.url);
    expect(await viewer.locator('#done').isDisabled()).toBe(true);
    await clickPagePoint(viewer, 250, 160);
    await viewer.keyboard.type('x');
    // A watch-only page does not even ask for a copy (the server would ignore it too).
    await viewer.locator('#screen').focus();
    await viewer.evaluate(() => document.dispatchEvent(new ClipboardEvent('copy', { clipboardData: new DataTransfer() })));
    expect(await viewer.evaluate(() => document.body.dataset.control)).toBe('none');
    // The socket's close comes after the clicks on the same connection: once the hub let the viewer go, any input
    // they caused would have been queued, and the extract below would wait for it.
    await viewer.close();
    await expect.poll(() => http.service.live.hubOf(id)).toBeUndefined();
    expect(await pageText(id)).toContain('Clicked 0 times');
  });

  it('refuses a forged, an expired and another session token on the page and on its socket', async () => {
    const id = await startSession();
    const other = await startSession();
    const { url } = (await liveView(id)).json.data;
    const token = new URL(url).searchParams.get('token')!;
    const forged = `${http.url}/live/${id}?token=${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect((await fetch(forged)).status).toBe(401);
    expect(await upgradeStatus(socketUrl(forged))).toBe(401);
    expect((await fetch(`${http.url}/live/${id}`)).status).toBe(401);
    const elsewhere = `${http.url}/live/${other}?token=${token}`;
    expect((await fetch(elsewhere)).status).toBe(403);
    expect(await upgradeStatus(socketUrl(elsewhere))).toBe(403);
    const short = (await liveView(id, { expiresInMs: 1_000 })).json.data.url;
    await expect.poll(async () => (await fetch(short)).status, { timeout: 10_000 }).toBe(401);
    expect(await upgradeStatus(socketUrl(short))).toBe(401);
    expect((await fetch(url)).status).toBe(200);
    expect(await upgradeStatus(socketUrl(url))).toBe(101);
  });

  it('refuses other encodings of a valid token, and a path with dot segments, on the page and on its socket', async () => {
    const id = await startSession();
    const { url } = (await liveView(id)).json.data;
    const token = new URL(url).searchParams.get('token')!;
    const [payload, mac] = token.split('.') as [string, string];
    // The same MAC bytes written otherwise: padded, standard base64, other unused low bits in the last character.
    const bytes = Buffer.from(mac, 'base64url');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const otherBits = mac.slice(0, -1) + alphabet[alphabet.indexOf(mac.at(-1)!) + 1];
    const standard = mac.replace(/-/g, '+').replace(/_/g, '/');
    const macs = [`${mac}=`, bytes.toString('base64'), ...(standard === mac ? [] : [standard]), otherBits];
    for (const other of macs) expect(Buffer.from(other, 'base64')).toEqual(bytes);
    const variants = [...macs.map((other) => `${payload}.${other}`), `${payload}..${mac}`, `${token}\0`];
    for (const variant of variants) {
      const page = `${http.url}/live/${id}?token=${encodeURIComponent(variant)}`;
      expect((await fetch(page)).status, variant).toBe(401);
      expect(await upgradeStatus(socketUrl(page)), variant).toBe(401);
    }
    const query = `?token=${encodeURIComponent(token)}`;
    expect(await rawStatus(`/live/./${id}${query}`)).toBe(404);
    expect(await rawStatus(`/live/x/../${id}${query}`)).toBe(404);
    expect(await rawStatus(`/live/${id}/./ws${query}`, true)).toBe(404);
    expect(await rawStatus(`/live/${id}${query}`)).toBe(200);
    expect(await rawStatus(`/live/${id}/ws${query}`, true)).toBe(101);
  });

  it('answers 404 to another key asking for a view of the session, as for every session call', async () => {
    const id = await startSession(KEY_A);
    const res = await liveView(id, {}, KEY_B);
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('session_not_found');
  });

  it('closes every viewer when the session ends', async () => {
    const id = await startSession();
    await navigate(id, '/live/red.html');
    const { url } = (await liveView(id)).json.data;
    const first = await openViewer(viewers, url);
    const second = await openViewer(viewers, url);
    expect(http.service.live.hubOf(id)?.viewerCount).toBe(2);
    expect((await api(http.url, 'POST', `/v1/sessions/${id}/end`, { key: KEY_A })).status).toBe(200);
    for (const viewer of [first, second])
      await expect.poll(() => viewer.evaluate(() => document.body.dataset.state), { timeout: 5_000 }).toBe('closed');
    expect(http.service.live.hubOf(id)).toBeUndefined();
    expect((await fetch(url)).status).toBe(404);
    await Promise.all([first.close(), second.close()]);
  });

  it('holds operations while a person has control and lets them run after Done', async () => {
    const id = await startSession();
    await navigate(id, '/live/form.html');
    const viewer = await openViewer(viewers, (await liveView(id)).json.data.url);
    await viewer.locator('#takeover').click();
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control)).toBe('person');
    let navigated = false;
    const pending = api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { key: KEY_A, body: { url: site.url('/live/red.html') } }).then(
      (res) => ((navigated = true), res),
    );
    await expect.poll(() => http.service.sessions.get(id, sessionOwner(id)).isBusy).toBe(true);
    expect(navigated).toBe(false);
    expect(await viewer.locator('#url').textContent()).toBe(site.url('/live/form.html'));
    await viewer.locator('#done').click();
    expect((await pending).status).toBe(200);
    await expect.poll(() => viewer.locator('#url').textContent()).toBe(site.url('/live/red.html'));
    await viewer.close();
  });

  it('stops the screencast when the last viewer leaves', async () => {
    const id = await startSession();
    await navigate(id, '/live/red.html');
    const { url } = (await liveView(id)).json.data;
    const viewer = await openViewer(viewers, url);
    expect(http.service.live.stats().viewers).toBeGreaterThanOrEqual(1);
    await viewer.close();
    await expect.poll(() => http.service.live.hubOf(id)).toBeUndefined();
  });
});

/** The status a request answers with the path sent as written (fetch would resolve dot segments first); 101 for an upgrade. */
function rawStatus(path: string, upgrade = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = upgrade
      ? {
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': randomBytes(16).toString('base64'),
        }
      : {};
    const req = httpRequest({ host: '127.0.0.1', port: http.port, path, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The owner scope the server gave KEY_A's sessions (tests reach the core session for its page). */
function sessionOwner(id: string): string {
  return (http.service.sessions as unknown as { sessions: Map<string, { owner: string }> }).sessions.get(id)!.owner;
}

describe('a takeover link nobody opens', () => {
  it('holds operations only until takeoverFirstViewerMs, then hands the page back', async () => {
    const lib = new BrowserSessions({ logger: silentLogger(), liveView: { takeoverFirstViewerMs: 1_500 } });
    try {
      const session = await lib.startSession();
      await session.liveView({ takeover: true });
      const started = Date.now();
      expect((await session.navigate(site.url('/index.html'))).data.result?.status).toBe(200);
      // It waited for the person who never came, then ran (the takeover's own timeout is 10 minutes).
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    } finally {
      await lib.close();
    }
  });
});
