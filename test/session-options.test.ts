import { describe, expect, it } from 'vitest';
import { errorCode, startStdioServer } from './fixtures/mcp-stdio.js';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { silentLogger } from '../src/core/logger.js';
import { BrowserService } from '../src/core/service.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { pngSize, reported, startOptionsSite } from './fixtures/options-site.js';
import { rejection } from './fixtures/rejection.js';

/** session_start options through the library (the core every door calls), on real Chromium. */
describe('session options', () => {
  const fixture = useLibrarySite({ sessionIdleTimeoutMs: 60_000 }, startOptionsSite);

  async function probe(session: BrowserSession): Promise<Record<string, unknown>> {
    await session.page.goto(fixture.site.url('/probe'));
    const { pageText } = await session.page.extract();
    const report = reported(pageText, 'PROBE');
    expect(report, pageText).toBeDefined();
    return report!;
  }

  it('a device gives the page its viewport, scale, touch and user agent, and the screenshot its size', async () => {
    const session = await fixture.lib.startSession({ device: 'Pixel 7' });
    const report = await probe(session);
    expect(report).toMatchObject({ innerWidth: 412, innerHeight: 839, devicePixelRatio: 2.625, touchEvents: true });
    expect(report.maxTouchPoints).toBeGreaterThan(0);
    expect(report.userAgent).toContain('Pixel 7');
    const size = pngSize(await session.page.screenshot());
    expect(size.width / 412).toBeCloseTo(size.height / 839, 1);
    expect([412, Math.round(412 * 2.625)]).toContain(size.width);
    expect(session.info().options).toEqual({ device: 'Pixel 7' });
    await session.end();
  });

  it('a viewport sets innerWidth and the screenshot size; without options the page is 1280x800 desktop', async () => {
    const sized = await fixture.lib.startSession({ viewport: { width: 640, height: 480 } });
    expect(await probe(sized)).toMatchObject({ innerWidth: 640, innerHeight: 480, devicePixelRatio: 1, touchEvents: false });
    expect(pngSize(await sized.page.screenshot())).toEqual({ width: 640, height: 480 });
    await sized.end();
    const plain = await fixture.lib.startSession();
    expect(await probe(plain)).toMatchObject({ innerWidth: 1280, innerHeight: 800 });
    expect(plain.info().options).toEqual({});
    await plain.end();
  });

  it('a viewport overrides the device viewport and a userAgent its user agent', async () => {
    const session = await fixture.lib.startSession({
      device: 'iPhone 15',
      viewport: { width: 500, height: 700 },
      userAgent: 'OptionsTest/1.0',
    });
    expect(await probe(session)).toMatchObject({ innerWidth: 500, innerHeight: 700, userAgent: 'OptionsTest/1.0', touchEvents: true });
    await session.end();
  });

  it('locale, time zone, color scheme and reduced motion reach the page', async () => {
    const session = await fixture.lib.startSession({
      locale: 'de-DE',
      timezoneId: 'Asia/Tokyo',
      colorScheme: 'dark',
      reducedMotion: 'reduce',
    });
    // Tokyo is UTC+9 all year: getTimezoneOffset is -540 on any date.
    expect(await probe(session)).toMatchObject({
      locale: 'de-DE',
      language: 'de-DE',
      timeZone: 'Asia/Tokyo',
      offset: -540,
      dark: true,
      reducedMotion: true,
    });
    await session.end();
  });

  it('geolocation is granted and navigator.geolocation reads it', async () => {
    const session = await fixture.lib.startSession({ geolocation: { latitude: 52.52, longitude: 13.405, accuracy: 25 } });
    await session.page.goto(fixture.site.url('/geo'));
    await expect
      .poll(async () => reported((await session.page.extract()).pageText, 'GEO'), { timeout: 15_000 })
      .toEqual({ lat: 52.52, lon: 13.405, accuracy: 25 });
    await session.end();
  });

  it('extraHTTPHeaders reach the server; SessionInfo shows their names, not their values', async () => {
    const session = await fixture.lib.startSession({ extraHTTPHeaders: { 'X-Team': 'blue-7', 'Accept-Language': 'fr' } });
    await session.page.goto(fixture.site.url('/probe'));
    const seen = fixture.site.requests.filter((request) => request.path === '/probe').at(-1)!;
    expect(seen.headers['x-team']).toBe('blue-7');
    expect(seen.headers['accept-language']).toBe('fr');
    expect(session.info().options.extraHTTPHeaders).toEqual({ 'X-Team': '***', 'Accept-Language': '***' });
    await session.end();
  });

  it('blocked images are never requested, are counted and reported, and the page text still reads', async () => {
    const before = fixture.site.count('/img/');
    const open = await fixture.lib.startSession();
    await open.page.goto(fixture.site.url('/images'));
    expect(fixture.site.count('/img/') - before).toBe(5);
    await open.end();

    const start = fixture.site.count('/img/');
    const session = await fixture.lib.startSession({ blockResources: ['image'] });
    const events: unknown[] = [];
    await session.page.goto(fixture.site.url('/images'), {}, { onOutcome: (info) => events.push(...info.pageEvents) });
    const { pageText } = await session.page.extract();
    expect(pageText).toContain('Gallery text stays readable');
    expect(pageText).toContain('The end of the gallery.');
    expect(fixture.site.count('/img/')).toBe(start);
    expect(fixture.site.count('/style.css')).toBeGreaterThan(0);
    await expect.poll(() => session.info().blockedRequests).toBe(5);
    const reportedCount = events
      .filter((event) => (event as { type: string }).type === 'blocked')
      .reduce((sum: number, event) => sum + ((event as { count?: number }).count ?? 1), 0);
    const laterEvents = session.info().recentEvents.filter((event) => event.type === 'blocked');
    expect(
      Math.max(
        reportedCount,
        laterEvents.reduce((sum, event) => sum + (event.count ?? 1), 0),
      ),
    ).toBe(5);
    expect(laterEvents[0]!.message).toMatch(/blocked by the session's options \(image \d\)/);
    await session.end();
  });

  it('blockUrls globs abort the matching requests only', async () => {
    const images = fixture.site.count('/img/');
    const styles = fixture.site.count('/style.css');
    const seen = fixture.site.requests.length;
    const session = await fixture.lib.startSession({ blockUrls: ['**/*.css', '**/img/3.png'] });
    await session.page.goto(fixture.site.url('/images'));
    await expect.poll(() => session.info().blockedRequests).toBe(2);
    expect(fixture.site.count('/style.css')).toBe(styles);
    expect(fixture.site.count('/img/') - images).toBe(4);
    expect(fixture.site.requests.slice(seen).some((request) => request.path === '/img/3.png')).toBe(false);
    await session.end();
  });

  it("a cross-site frame's images are blocked and counted too, and its text still reads", async () => {
    const start = fixture.site.count('/img/f');
    const session = await fixture.lib.startSession({ blockResources: ['image'] });
    await session.page.goto(fixture.site.url('/framed'));
    await expect
      .poll(async () => ((await session.page.extract({ iframes: true })) as { pageText: string }).pageText)
      .toContain('Inner gallery text');
    await expect.poll(() => session.info().blockedRequests).toBe(3);
    expect(fixture.site.count('/img/f')).toBe(start);
    expect(fixture.site.count('/frame-gallery')).toBeGreaterThan(0);
    await session.end();
  });

  it('a tab the session opens blocks images from its first navigation, a popup kept as a tab from the session seeing it on', async () => {
    const tabs = new BrowserSessions({ logger: silentLogger(), popups: 'tab' });
    try {
      const session = await tabs.startSession({ blockResources: ['image'] });
      const start = fixture.site.count('/img/');
      await session.page.act({ method: 'newTab', arguments: { url: fixture.site.url('/images') } });
      await expect.poll(() => session.info().blockedRequests).toBe(5);
      expect(fixture.site.count('/img/')).toBe(start);

      // The popup's first document may load its images before the session sees the popup (docs/sessions.md).
      await session.page.goto(fixture.site.url('/opener'));
      await expect.poll(() => session.info().tabs.length).toBe(3);
      const popup = session.info().tabs.at(-1)!;
      await session.page.act({ method: 'selectTab', arguments: { tabId: popup.tabId } });
      const before = session.info().blockedRequests!;
      const images = fixture.site.count('/img/');
      await session.page.goto(fixture.site.url('/images?again'));
      await expect.poll(() => session.info().blockedRequests).toBe(before + 5);
      expect(fixture.site.count('/img/')).toBe(images);
      await session.end();
    } finally {
      await tabs.close();
    }
  });

  it('a session blocking resource types keeps the browser cache for the requests it lets through', async () => {
    const session = await fixture.lib.startSession({ blockResources: ['image'] });
    const styles = fixture.site.count('/cached.css');
    await session.page.goto(fixture.site.url('/cached'));
    await session.page.goto(fixture.site.url('/cached?again'));
    expect(fixture.site.count('/cached.css') - styles).toBe(1);
    expect(session.info().blockedRequests).toBe(2);
    await session.end();
  });

  it('javaScriptEnabled false: the page scripts do not run and the page text still reads', async () => {
    const session = await fixture.lib.startSession({ javaScriptEnabled: false });
    await session.page.goto(fixture.site.url('/probe'));
    const { pageText } = await session.page.extract();
    expect(pageText).toContain('pending');
    expect(reported(pageText, 'PROBE')).toBeUndefined();
    await session.end();
  });

  it("a session's timeoutMs expires it after that long idle, sooner than the server's", async () => {
    const session = await fixture.lib.startSession({ timeoutMs: 1_000 });
    const info = session.info();
    expect(Date.parse(info.expiresAt) - Date.parse(info.lastUsedAt)).toBe(1_000);
    await expect
      .poll(async () => (await rejection(Promise.resolve().then(() => session.info()))).code, { timeout: 20_000 })
      .toBe('session_not_found');
  });

  it('invalid values are invalid_argument naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ viewport: { width: 100, height: 600 } }, 'viewport.width'],
      [{ viewport: { width: 800.5, height: 600 } }, 'viewport.width'],
      [{ device: 'iPhone15' }, 'device'],
      [{ locale: 'not a locale!' }, 'locale'],
      [{ timezoneId: 'Mars/Olympus' }, 'timezoneId'],
      [{ geolocation: { latitude: 91, longitude: 0 } }, 'geolocation.latitude'],
      [{ colorScheme: 'purple' }, 'colorScheme'],
      [{ userAgent: 'a\r\nX-Evil: 1' }, 'userAgent'],
      [{ userAgent: 'Agent\x01/1.0' }, 'userAgent'],
      [{ userAgent: 'Agent\t1.0' }, 'userAgent'],
      [{ userAgent: 'Agent\x7f' }, 'userAgent'],
      [{ blockUrls: ['**/{a,b'] }, 'blockUrls.0'],
      [{ extraHTTPHeaders: { Authorization: 'Bearer x' } }, 'extraHTTPHeaders.Authorization'],
      [{ extraHTTPHeaders: { Cookie: 'a=b' } }, 'extraHTTPHeaders.Cookie'],
      [{ extraHTTPHeaders: { 'bad name': 'x' } }, 'extraHTTPHeaders.bad name'],
      [{ proxy: { server: 'http://user:pw@127.0.0.1:3128' } }, 'proxy.server'],
      [{ proxy: { server: 'socks9://127.0.0.1:1' } }, 'proxy.server'],
      [{ blockResources: ['image', 'script'] }, 'blockResources.1'],
      [{ timeoutMs: 10 }, 'timeoutMs'],
      [{ timeoutMs: 120_000 }, 'timeoutMs'],
      [{ nope: true }, ''],
    ];
    const open = fixture.lib.list().length;
    const contexts = (await fixture.lib.service.browser.get()).contexts().length;
    for (const [options, field] of cases) {
      const err = await rejection(fixture.lib.startSession(options));
      expect(err.code, JSON.stringify(options)).toBe('invalid_argument');
      const paths = (err.details as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path);
      expect(paths, JSON.stringify(options)).toContain(field);
    }
    const device = await rejection(fixture.lib.startSession({ device: 'iPhone15' }));
    expect(device.message).toContain('"iPhone 15"');
    expect(fixture.lib.list()).toHaveLength(open);
    expect((await fixture.lib.service.browser.get()).contexts()).toHaveLength(contexts);
  });

  it('the operator restricts options: a denied option is option_not_allowed, a misspelt rule fails at start', async () => {
    const strict = new BrowserSessions({ logger: silentLogger(), sessionOptions: { denied: ['proxy', 'javaScriptEnabled'] } });
    try {
      const err = await rejection(strict.startSession({ javaScriptEnabled: false }));
      expect(err.code).toBe('option_not_allowed');
      expect(err.details).toEqual({ field: 'javaScriptEnabled' });
      const allowed = await strict.startSession({ locale: 'fr-FR' });
      expect(allowed.info().options).toEqual({ locale: 'fr-FR' });
      await allowed.end();
    } finally {
      await strict.close();
    }
    const only = new BrowserSessions({ logger: silentLogger(), sessionOptions: { allowed: ['viewport'] } });
    try {
      expect((await rejection(only.startSession({ device: 'Pixel 7' }))).details).toEqual({ field: 'device' });
    } finally {
      await only.close();
    }
    expect(() => new BrowserService({ logger: silentLogger(), sessionOptions: { denied: ['proxies'] } })).toThrow(
      /no session option named proxies/,
    );
  });

  it('recording is an option the operator can deny: --session-options-denied record starts, and record is option_not_allowed', async () => {
    const server = await startStdioServer(['--session-options-denied', 'record']);
    try {
      const refused = await server.call('session_start', { record: true });
      expect(errorCode(refused)).toBe('option_not_allowed');
      const plain = await server.call('session_start', {});
      expect(plain.isError).toBeFalsy();
      await server.call('session_end', { sessionId: (plain.structuredContent as { id: string }).id });
    } finally {
      await server.close();
    }
  });
});
