import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { api, startHttp, type TestHttp } from './http-fixture.js';
import { startRunServer, TEST_LAUNCH_OPTIONS, type HostProcess } from './fixtures/browser-hosts.js';
import { clickPagePoint, framePixel, launchViewerBrowser, openViewer } from './fixtures/live-viewer.js';
import { startSiteServer, type SiteServer } from './fixtures/site-server.js';

// The live view of a session on a remote Playwright host (run-server): the same screencast and input, over its protocol.
let site: SiteServer;
let host: HostProcess;
let http: TestHttp;
let viewers: Browser;

beforeAll(async () => {
  [site, host, viewers] = await Promise.all([startSiteServer(), startRunServer(), launchViewerBrowser()]);
  const service = new BrowserService({
    logger: silentLogger(),
    egressPolicy: 'all',
    playwrightEndpoints: [host.url],
    remoteLaunchOptions: TEST_LAUNCH_OPTIONS,
  });
  http = await startHttp({}, service);
}, 120_000);

afterAll(async () => {
  await viewers?.close();
  await http?.close();
  await host?.kill();
  await site?.close();
});

describe('live view on a run-server host', { timeout: 120_000 }, () => {
  it('shows the remote page and a viewer click reaches it', async () => {
    const id = (await api(http.url, 'POST', '/v1/sessions/start', { body: {} })).json.data.id;
    expect((await api(http.url, 'GET', `/v1/sessions/${id}`)).json.data.host).not.toBe('local');
    await api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: site.url('/live/red.html') } });
    const viewer = await openViewer(viewers, (await api(http.url, 'POST', `/v1/sessions/${id}/liveView`, { body: {} })).json.data.url);
    await expect.poll(async () => (await framePixel(viewer, 0.5, 0.9))[0], { timeout: 15_000 }).toBeGreaterThan(200);
    await api(http.url, 'POST', `/v1/sessions/${id}/navigate`, { body: { url: site.url('/live/form.html') } });
    await expect.poll(() => viewer.locator('#url').textContent(), { timeout: 15_000 }).toBe(site.url('/live/form.html'));
    await clickPagePoint(viewer, 250, 160);
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control), { timeout: 15_000 }).toBe('person');
    await viewer.locator('#done').click();
    await expect.poll(() => viewer.evaluate(() => document.body.dataset.control), { timeout: 15_000 }).toBe('none');
    const text = (await api(http.url, 'POST', `/v1/sessions/${id}/extract`, { body: {} })).json.data.result.pageText;
    expect(text).toContain('Clicked 1 times');
    await viewer.close();
  });
});
