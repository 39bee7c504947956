import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserSessions } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { startCdpBrowser, startRunServer, TEST_LAUNCH_OPTIONS, type HostProcess } from './fixtures/browser-hosts.js';
import { reported, startOptionsSite, type OptionsSite } from './fixtures/options-site.js';

/** The options apply where the context is created, whatever the host: a Playwright server and a browser over CDP. */
describe('session options on remote browser hosts', () => {
  let site: OptionsSite;
  const hosts: HostProcess[] = [];

  beforeAll(async () => {
    site = await startOptionsSite();
  });
  afterAll(async () => {
    for (const host of hosts) await host.kill();
    await site?.close();
  });

  for (const kind of ['playwright', 'cdp'] as const) {
    it(`a ${kind} host's session gets the device, locale, time zone and blocked images`, async () => {
      const host = kind === 'playwright' ? await startRunServer() : await startCdpBrowser();
      hosts.push(host);
      const lib = new BrowserSessions({
        logger: silentLogger(),
        egressPolicy: 'all',
        remoteLaunchOptions: TEST_LAUNCH_OPTIONS,
        ...(kind === 'playwright' ? { playwrightEndpoints: [host.url] } : { cdpEndpoints: [host.url] }),
      });
      try {
        const session = await lib.startSession({ device: 'Pixel 7', locale: 'ja-JP', timezoneId: 'Asia/Tokyo', blockResources: ['image'] });
        expect(session.info().host).not.toBe('local');
        await session.page.goto(site.url('/probe'));
        const report = reported((await session.page.extract()).pageText, 'PROBE');
        expect(report).toMatchObject({ innerWidth: 412, devicePixelRatio: 2.625, touchEvents: true, locale: 'ja-JP', offset: -540 });
        const images = site.count('/img/');
        await session.page.goto(site.url('/images'));
        expect(site.count('/img/')).toBe(images);
        await expect.poll(() => session.info().blockedRequests).toBe(5);
        await session.end();
      } finally {
        await lib.close();
      }
    }, 120_000);
  }
});
