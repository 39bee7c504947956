import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSALS, STALE_POINTER_MS } from '../src/core/live/index.js';
import type { Session } from '../src/core/sessions.js';
import { api } from './http-fixture.js';
import { useSiteHttp } from './fixtures/site-http.js';
import { connectSocketViewer, launchViewerBrowser, openViewer, type SocketViewerClient } from './fixtures/live-viewer.js';

// A person's input through the live view arrives whole and in order, or the viewer is told what was not delivered.
const fixture = useSiteHttp();
const opened: SocketViewerClient[] = [];
let viewers: Browser;
/** 94 characters, capitals and punctuation included, as the probe typed them. */
const TEXT = 'The quick brown fox jumps over the lazy dog; then five boxing wizards jump quickly. 0123456789';

beforeAll(async () => {
  viewers = await launchViewerBrowser();
});

afterAll(async () => {
  for (const viewer of opened) viewer.close();
  await viewers?.close();
});

async function startSession(path: string): Promise<string> {
  const started = await api(fixture.server.url, 'POST', '/v1/sessions/start', { body: {} });
  const id: string = started.json.data.id;
  await call('navigate', id, { url: fixture.site.url(path) });
  return id;
}

async function call(operation: string, id: string, body: unknown) {
  const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/${operation}`, { body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.data?.result;
}

async function viewer(id: string): Promise<SocketViewerClient> {
  const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/liveView`, { body: {} });
  const client = await connectSocketViewer(res.json.data.url);
  opened.push(client);
  return client;
}

function coreSession(id: string): Session {
  return (fixture.server.service.sessions as unknown as { sessions: Map<string, Session> }).sessions.get(id)!;
}

const typed = (id: string) => coreSession(id).page.inputValue('#typed');
const pressKey = (person: SocketViewerClient, key: string) => {
  person.send({ type: 'key', action: 'down', key });
  person.send({ type: 'key', action: 'up', key });
};
const refusals = (person: SocketViewerClient) => person.messages.filter((m) => m.type === 'refused');
/** An act that holds the session's queue for `ms`, as an operation or the agent would. */
const holdFor = (id: string, ms: number) => call('act', id, { action: { method: 'wait', arguments: { ms } } });
const busy = (id: string) => expect.poll(() => coreSession(id).isBusy).toBe(true);

describe('live-view input', { timeout: 90_000 }, () => {
  it('keys typed while an operation holds the session all arrive, in order, once it ends', async () => {
    const id = await startSession('/live/slow-keys.html');
    const person = await viewer(id);
    const holding = holdFor(id, 3_000);
    await busy(id);
    // Spread over the operation and past STALE_POINTER_MS: keys are not stale, however long they waited.
    for (const char of TEXT) {
      pressKey(person, char);
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    await holding;
    await expect.poll(() => typed(id), { timeout: 30_000 }).toBe(TEXT);
    person.send({ type: 'done' });
    await person.roundTrip();
    expect(refusals(person)).toEqual([]);
    await call('end', id, {});
  });

  it('keys still queued at Done reach a page slow to take them before the next operation runs', async () => {
    // 60 ms of script per key: 94 keys take the page over 5 s, the wait a hold gave its input before.
    const id = await startSession('/live/slow-keys.html?ms=60');
    const person = await viewer(id);
    person.send({ type: 'takeover' });
    await person.next((m) => m.type === 'status' && m.control === 'person');
    for (const char of TEXT) pressKey(person, char);
    person.send({ type: 'done' });
    await person.roundTrip();
    // The next operation waits behind the hold until its input has run.
    await call('act', id, { action: { method: 'wait', arguments: { ms: 1 } } });
    expect(await typed(id)).toBe(TEXT);
    expect(refusals(person)).toEqual([]);
    await call('end', id, {});
  });

  it('refuses, visibly, a click sent long before the person got the page and the input after it', async () => {
    const id = await startSession('/live/slow-keys.html');
    const person = await viewer(id);
    const holding = holdFor(id, STALE_POINTER_MS + 1_500);
    await busy(id);
    person.send({ type: 'mouse', action: 'down', x: 0.1, y: 0.1 });
    person.send({ type: 'mouse', action: 'up', x: 0.1, y: 0.1 });
    for (const char of 'late') pressKey(person, char);
    await holding;
    const refused = await person.next((m) => m.type === 'refused');
    // The click and four keys; the button's release and the keys' releases are parts of them.
    expect(refused).toEqual({ type: 'refused', total: 5, message: REFUSALS.stale });
    expect(await typed(id)).toBe('');
    // Input sent once the person holds the page is delivered as usual.
    await person.next((m) => m.type === 'status' && m.control === 'person');
    for (const char of 'now') pressKey(person, char);
    await expect.poll(() => typed(id), { timeout: 15_000 }).toBe('now');
    person.send({ type: 'done' });
    await call('end', id, {});
  });

  it('refuses input past what may wait, and messages it cannot read, and says how many', async () => {
    const id = await startSession('/live/slow-keys.html');
    const person = await viewer(id);
    const holding = holdFor(id, 1_500);
    await busy(id);
    // 260 presses are 520 events; 500 may wait: the last 10 presses are refused.
    for (let i = 0; i < 260; i++) pressKey(person, 'x');
    await holding;
    await expect.poll(() => refusals(person).at(-1)).toEqual({ type: 'refused', total: 10, message: REFUSALS.full });
    await expect.poll(() => typed(id), { timeout: 30_000 }).toBe('x'.repeat(250));
    person.send({ type: 'key', action: 'down', key: 'K'.repeat(33) });
    person.ws.send('not json');
    await expect.poll(() => refusals(person).at(-1)).toEqual({ type: 'refused', total: 12, message: REFUSALS.unreadable });
    person.send({ type: 'done' });
    await call('end', id, {});
  });

  it('the viewer page shows what was not delivered when Done is pressed before the person had the page, and pastes a long text whole', async () => {
    const id = await startSession('/live/slow-keys.html');
    const res = await api(fixture.server.url, 'POST', `/v1/sessions/${id}/liveView`, { body: {} });
    const page = await openViewer(viewers, res.json.data.url);
    const holding = holdFor(id, 3_000);
    await busy(id);
    await page.locator('#screen').focus();
    await page.keyboard.type('abc');
    await expect.poll(() => page.evaluate(() => document.body.dataset.control)).toBe('waiting');
    await page.locator('#done').click();
    await expect.poll(() => page.evaluate(() => document.body.dataset.refused)).toBe('3');
    expect(await page.locator('#refused').textContent()).toBe(`3 inputs were not delivered. ${REFUSALS.cancelled}`);
    await holding;
    expect(await typed(id)).toBe('');

    // A paste longer than one message may carry goes in pieces, and arrives whole.
    const long = 'pasted '.repeat(7_000);
    await page.evaluate((text) => {
      const data = new DataTransfer();
      data.setData('text/plain', text);
      document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data }));
    }, long);
    await expect.poll(() => typed(id), { timeout: 30_000 }).toBe(long);
    expect(await page.evaluate(() => document.body.dataset.refused)).toBe('3');
    await page.locator('#done').click();
    await page.close();
    await call('end', id, {});
  });
});
