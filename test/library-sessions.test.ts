import { describe, expect, it } from 'vitest';
import { BrowserSessions, type BrowserSession } from '../src/client/index.js';
import { ServiceError } from '../src/core/errors.js';
import { silentLogger } from '../src/core/logger.js';
import { waitFor } from './fixtures/processes.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { navigateOperation } from '../src/core/operations/index.js';

/** The same core through the in-process library (BrowserSessions / BrowserService). */
describe('library sessions and navigate', () => {
  const fixture = useLibrarySite({ sessionIdleTimeoutMs: 60_000 });

  const internal = (session: BrowserSession) => fixture.lib.service.sessions.get(session.id, 'library');
  const openContexts = async () => (await fixture.lib.service.browser.get()).contexts().length;
  const codeOf = async (promise: Promise<unknown>): Promise<string | undefined> => {
    try {
      await promise;
    } catch (err) {
      return err instanceof ServiceError ? err.code : `not a ServiceError: ${String(err)}`;
    }
    return undefined;
  };

  it('navigate answers the NavigateResponse shape with the serialised response', async () => {
    const session = await fixture.lib.startSession();
    const response = await session.navigate(fixture.site.url('/redirect?to=/status?code=404'), {
      options: { waitUntil: 'domcontentloaded' },
    });
    expect(response).toMatchObject({
      success: true,
      data: {
        result: {
          status: 404,
          ok: false,
          url: fixture.site.url('/status?code=404'),
          redirectChain: [fixture.site.url('/redirect?to=/status?code=404')],
        },
      },
    });
    expect(await session.page.goto(fixture.site.url('/index.html'))).toMatchObject({ status: 200, ok: true });
    expect(await session.page.goto(fixture.site.url('/index.html#top'))).toBeNull();
    await session.end();
  });

  it("navigate answers the response headers, and with frameId that frame's id (MCP answers the status and URL alone)", async () => {
    const session = await fixture.lib.startSession();
    const echoed = await session.page.goto(fixture.site.url('/echo-headers'));
    expect(echoed).toMatchObject({ status: 200, ok: true, statusText: 'OK', redirectChain: [] });
    expect(echoed!.headers['x-test']).toBe('echo');
    expect(echoed!.headers['content-type']).toContain('text/html');
    await session.page.goto(fixture.site.url('/frames.html'));
    const child = session.info().frames.find((frame) => frame.name === 'child')!;
    const framed = await session.navigate(fixture.site.url('/index.html'), { frameId: child.frameId });
    expect(framed.data.result).toMatchObject({ status: 200, url: fixture.site.url('/index.html'), frameId: child.frameId });
    await session.end();
  });

  it('library errors are ServiceErrors with the same codes as the MCP door', async () => {
    const session = await fixture.lib.startSession();
    expect(await codeOf(session.navigate('javascript:alert(1)'))).toBe('url_not_allowed');
    expect(await codeOf(session.navigate('nope'))).toBe('invalid_argument');
    expect(await codeOf(session.navigate(fixture.site.url('/slow?ms=10000'), { options: { timeout: 300 } }))).toBe('navigation_timeout');
    expect(await codeOf(session.navigate(fixture.site.url('/index.html'), { frameId: 'missing' }))).toBe('frame_not_found');
    await session.end();
    expect(await codeOf(session.navigate(fixture.site.url('/index.html')))).toBe('session_not_found');
  });

  it('navigate validates its input like the other doors: a bad waitUntil, a negative timeout or an unknown key is invalid_argument', async () => {
    const session = await fixture.lib.startSession();
    const url = fixture.site.url('/index.html');
    const bogus = { options: { waitUntil: 'bogus' } } as unknown as Parameters<BrowserSession['navigate']>[1];
    expect(await codeOf(session.navigate(url, bogus))).toBe('invalid_argument');
    expect(await codeOf(session.navigate(url, { options: { timeout: -5 } }))).toBe('invalid_argument');
    expect(await codeOf(session.navigate(url, { nope: true } as never))).toBe('invalid_argument');
    expect(await codeOf(session.page.goto(url, { waitUntil: 'bogus' } as never))).toBe('invalid_argument');
    // Nothing was navigated by the refused calls.
    expect(session.info().url).toBe('about:blank');
    await session.end();
  });

  it('a crashed page gives page_crashed once and then the session works again', async () => {
    const session = await fixture.lib.startSession();
    await session.navigate(fixture.site.url('/index.html'));
    const { context, page } = internal(session);
    const cdp = await context.newCDPSession(page);
    // The renderer dies before answering, so the call itself never resolves cleanly.
    void cdp.send('Page.crash').catch(() => undefined);
    expect(await waitFor(() => internal(session).events.some((event) => event.type === 'crash'), 30_000)).toBe(true);

    expect(await codeOf(session.navigate(fixture.site.url('/page2.html')))).toBe('page_crashed');
    const again = await session.navigate(fixture.site.url('/page2.html'));
    expect(again.data.result).toMatchObject({ status: 200 });
    expect(internal(session).context.pages()).toHaveLength(1);
    expect(session.info().recentEvents.map((event) => event.type)).toContain('crash');
    await session.end();
  });

  it('a crash during a navigation is reported by that navigation only', async () => {
    const session = await fixture.lib.startSession();
    await session.navigate(fixture.site.url('/index.html'));
    const { context, page } = internal(session);
    const cdp = await context.newCDPSession(page);
    // Same site, so the document commits in the renderer we crash and then waits for an image that never comes.
    const pending = codeOf(session.navigate(fixture.site.url('/slow-subresource?ms=20000'), { options: { timeout: 15_000 } }));
    await waitFor(() => page.url().includes('slow-subresource'), 30_000);
    void cdp.send('Page.crash').catch(() => undefined);
    expect(await pending).toBe('page_crashed');
    expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
    await session.end();
  });

  it('a popup is closed so the session keeps exactly one page', async () => {
    const session = await fixture.lib.startSession();
    const outcome = await fixture.lib.service.run(navigateOperation, 'library', session.id, { url: fixture.site.url('/popup.html') });
    expect(outcome.result).toMatchObject({ ok: true });
    const { context } = internal(session);
    expect(
      await waitFor(() => context.pages().length === 1 && session.info().recentEvents.some((event) => event.type === 'popup'), 30_000),
    ).toBe(true);
    expect(context.pages()[0]!.url()).toBe(fixture.site.url('/popup.html'));
    await session.end();
  });

  it('dialogs are answered by policy: alert accepted, confirm dismissed', async () => {
    const session = await fixture.lib.startSession();
    const outcome = await fixture.lib.service.run(navigateOperation, 'library', session.id, { url: fixture.site.url('/dialogs.html') });
    expect(outcome.pageEvents.map((event) => event.type)).toEqual(['dialog', 'dialog']);
    expect(await internal(session).page.evaluate(() => document.body.dataset.confirmed)).toBe('false');
    await session.end();
  });

  it('operations on one session run one at a time, in order', async () => {
    const session = await fixture.lib.startSession();
    const finished: string[] = [];
    await Promise.all(
      ['/slow?ms=400', '/page2.html', '/index.html'].map((path) =>
        session.navigate(fixture.site.url(path)).then(() => finished.push(path)),
      ),
    );
    expect(finished).toEqual(['/slow?ms=400', '/page2.html', '/index.html']);
    expect(internal(session).page.url()).toBe(fixture.site.url('/index.html'));
    await session.end();
  });

  it('an operation whose client gave up while it waited in the queue is not run', async () => {
    const session = await fixture.lib.startSession();
    const first = session.navigate(fixture.site.url('/slow?ms=400'));
    const controller = new AbortController();
    let ran = false;
    const queued = fixture.lib.service.operate('library', session.id, async () => (ran = true), { signal: controller.signal });
    controller.abort();
    expect(await codeOf(queued)).toBe('cancelled');
    await first;
    expect(ran).toBe(false);
    await session.end();
  });

  it('session end and idle expiry close the browser context', async () => {
    const before = await openContexts();
    const ended = await fixture.lib.startSession();
    expect(await openContexts()).toBe(before + 1);
    await ended.end();
    expect(await openContexts()).toBe(before);

    const quick = new BrowserSessions({ logger: silentLogger(), sessionIdleTimeoutMs: 300 });
    try {
      const idle = await quick.startSession();
      const browser = await quick.service.browser.get();
      expect(browser.contexts()).toHaveLength(1);
      expect(await waitFor(() => browser.contexts().length === 0, 30_000)).toBe(true);
      expect(await codeOf(idle.navigate(fixture.site.url('/index.html')))).toBe('session_not_found');
    } finally {
      await quick.close();
    }
  });
});
