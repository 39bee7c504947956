import { describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { ServiceError } from '../src/core/errors.js';
import { waitFor } from './fixtures/processes.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { navigateOperation } from '../src/core/operations/index.js';
import { EventLog } from '../src/core/page/events.js';

/**
 * Policy: dialogs, popups, endless loading, crashes and huge DOMs never block a session, another session or the
 * server, and the result says what happened.
 */
describe('hostile pages', () => {
  const fixture = useLibrarySite({ sessionIdleTimeoutMs: 120_000 });

  const internal = (session: BrowserSession) => fixture.lib.service.sessions.get(session.id, 'library');
  const outcome = async <T>(promise: Promise<T>): Promise<{ value?: T; code?: string; message?: string }> => {
    try {
      return { value: await promise };
    } catch (err) {
      if (err instanceof ServiceError) return { code: err.code, message: err.message };
      return { code: `not a ServiceError: ${String(err)}` };
    }
  };
  /** A plain page and its text on another session: proof that it is not held up. */
  const otherSessionWorks = async (other: BrowserSession) => {
    expect((await other.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
    return (await other.page.extract()).pageText;
  };

  it(
    'extract() on a 200,000-element page fails with page_too_large pointing to selector, reads a selected part, and another session keeps working meanwhile',
    { timeout: 150_000 },
    async () => {
      const huge = await fixture.lib.startSession();
      const other = await fixture.lib.startSession();
      try {
        await huge.navigate(fixture.site.url('/hostile/huge-dom.html'), { options: { timeout: 60_000 } });
        expect(await internal(huge).page.title()).toMatch(/^Huge DOM \(2\d{5} elements\)$/);

        // The huge page is read over and over while the other session navigates and reads its own page.
        const started = Date.now();
        let othersDone = false;
        const reads: Array<{ value?: unknown; code?: string; message?: string }> = [];
        const reading = (async () => {
          while (!othersDone || reads.length < 2) reads.push(await outcome(huge.page.extract()));
        })();
        const otherTexts = [await otherSessionWorks(other), await otherSessionWorks(other)];
        othersDone = true;
        await reading;
        for (const text of otherTexts) expect(text).toContain('Second page');
        // Every browser call of the read is bounded; an unbounded one would hang until the test timeout.
        expect(Date.now() - started).toBeLessThan(100_000);
        for (const read of reads) {
          expect(read.code).toBe('page_too_large');
          expect(read.message).toMatch(/has 2\d{5} elements.*selector/s);
        }

        // A part that is itself too large is refused from a count alone; a small part is read without the whole tree.
        const tooMuch = await outcome(huge.page.extract({ selector: '//ul' }));
        expect(tooMuch.code).toBe('page_too_large');
        expect(tooMuch.message).toMatch(/selected part of the page has 2\d{5} elements/);
        // Blink builds its accessibility objects for the whole document on the first such read: on a loaded machine
        // that can outlast the call bound, which then answers timeout (the read is bounded, never a hang).
        const part = await outcome(huge.page.extract({ selector: '//li[last()]' }) as Promise<{ pageText: string }>);
        if (part.code !== undefined) expect(part.code).toBe('timeout');
        else {
          expect(part.value!.pageText).toContain('Item 49999');
          expect(part.value!.pageText).toContain('Buy 49999');
          expect(part.value!.pageText).not.toContain('Item 49998');
        }

        // The session itself is not stuck on the page either.
        expect((await huge.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
      } finally {
        await huge.end();
        await other.end();
      }
    },
  );

  it('reads, the unresponsive-page probe and stopping a hung load reuse the CDP session opened with the page, so they need no attach beside a busy browser', async () => {
    const session = await fixture.lib.startSession();
    const { context } = internal(session);
    // Counts attaches made from now on: each is a browser round trip that can time out beside a huge page's read.
    let attached = 0;
    const attach = context.newCDPSession.bind(context);
    context.newCDPSession = (target) => {
      attached++;
      return attach(target);
    };
    try {
      await session.navigate(fixture.site.url('/page2.html'));
      expect((await session.page.extract()).pageText).toContain('Second page');
      // A load that never ends times out: the navigation is stopped and the page probed for a script that never yields.
      expect((await outcome(session.navigate(fixture.site.url('/hang'), { options: { timeout: 1_000 } }))).code).toBe('navigation_timeout');
      expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
      expect((await session.page.extract()).pageText).toContain('Second page');
      expect(attached).toBe(0);
    } finally {
      await session.end();
    }
  });

  it('a page that crashes during extract() gives page_crashed, and the session works afterwards', async () => {
    const session = await fixture.lib.startSession();
    try {
      // The DOM never settles, so extract() is still waiting for it when the renderer dies.
      await session.navigate(fixture.site.url('/hostile/mutating.html'));
      const { context, page } = internal(session);
      const cdp = await context.newCDPSession(page);
      const reading = outcome(session.page.extract());
      // Once queued, the read starts within microtasks, well before the crash can travel to the renderer and back.
      await expect.poll(() => internal(session).isBusy).toBe(true);
      void cdp.send('Page.crash').catch(() => undefined);
      expect((await reading).code).toBe('page_crashed');

      expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
      expect((await session.page.extract()).pageText).toContain('Second page');
      expect(internal(session).context.pages()).toHaveLength(1);
      expect(session.info().recentEvents.map((event) => event.type)).toContain('crash');
    } finally {
      await session.end();
    }
  });

  it('an onbeforeunload page does not keep the session from navigating away', async () => {
    const session = await fixture.lib.startSession();
    try {
      await session.navigate(fixture.site.url('/hostile/beforeunload.html'));
      // Chromium asks "leave site?" only after the user has interacted with the page.
      await fixture.lib.service.operate('library', session.id, (s) => s.page.click('#stay'));
      const left = await fixture.lib.service.run(navigateOperation, 'library', session.id, { url: fixture.site.url('/page2.html') });
      expect(left.result).toMatchObject({ status: 200, url: fixture.site.url('/page2.html') });
      expect(left.pageEvents).toContainEqual(
        expect.objectContaining({ type: 'dialog', message: expect.stringMatching(/^beforeunload .* accepted/) }),
      );
    } finally {
      await session.end();
    }
  });

  it('a page that opens 50 popups in a loop does not block: each is closed and reported', async () => {
    const session = await fixture.lib.startSession();
    try {
      const opened = await fixture.lib.service.run(navigateOperation, 'library', session.id, {
        url: fixture.site.url('/hostile/popups.html'),
      });
      expect(opened.result).toMatchObject({ status: 200 });
      const { context } = internal(session);
      const popups = () => internal(session).events.filter((event) => event.type === 'popup');
      expect(await waitFor(() => popups().length === 50 && context.pages().length === 1, 20_000)).toBe(true);
      expect(context.pages()[0]!.url()).toBe(fixture.site.url('/hostile/popups.html'));
      expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
    } finally {
      await session.end();
    }
  });

  it('the same event again only counts up the last one, so 1,000 repeated dialogs keep the page events before them', () => {
    const log = new EventLog();
    log.record({ type: 'unresponsive', message: 'The page stopped responding.' });
    for (let i = 0; i < 1_000; i++) log.record({ type: 'dialog', message: 'alert "again" was accepted by policy.', url: 'http://a/' });
    log.record({ type: 'dialog', message: 'alert "other" was accepted by policy.', url: 'http://a/' });
    expect(log.takeUnreported().map(({ type, message, count }) => ({ type, message, count }))).toEqual([
      { type: 'unresponsive', message: 'The page stopped responding.', count: undefined },
      { type: 'dialog', message: 'alert "again" was accepted by policy. (1000 times)', count: 1_000 },
      { type: 'dialog', message: 'alert "other" was accepted by policy.', count: undefined },
    ]);
    // A repeat after the report is a new event: what one operation reports is what happened during it.
    log.record({ type: 'dialog', message: 'alert "other" was accepted by policy.', url: 'http://a/' });
    expect(log.takeUnreported()).toMatchObject([{ type: 'dialog', message: 'alert "other" was accepted by policy.' }]);
  });

  it('window.print() and alert() called in a loop do not block: every alert is answered and the script runs to its end', async () => {
    const session = await fixture.lib.startSession();
    try {
      const loaded = await fixture.lib.service.run(navigateOperation, 'library', session.id, {
        url: fixture.site.url('/hostile/dialog-loop.html'),
      });
      expect(loaded.result).toMatchObject({ status: 200 });
      expect(loaded.pageEvents.length).toBeGreaterThan(0);
      expect(loaded.pageEvents.every((event) => event.type === 'dialog' && /^alert "alert \d+" was accepted/.test(event.message))).toBe(
        true,
      );
      expect(
        (await fixture.lib.service.operate('library', session.id, (s) => s.page.evaluate(() => document.body.dataset.done))).result,
      ).toBe('true');
      expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
    } finally {
      await session.end();
    }
  });

  it('a page asking dialogs in an endless loop does not hold the session: it is replaced, saying so, and other sessions are unaffected', async () => {
    const session = await fixture.lib.startSession();
    const other = await fixture.lib.startSession();
    try {
      await session.navigate(fixture.site.url('/hostile/dialog-endless.html'));
      expect(await waitFor(() => internal(session).events.some((event) => event.type === 'dialog'), 10_000)).toBe(true);
      expect(await otherSessionWorks(other)).toContain('Second page');

      // The looping document never lets the next one commit. Usually navigate finds it unresponsive first and replaces
      // it, and the navigation succeeds on the fresh page; if the page answered that probe between two dialogs, the
      // navigation times out and the page is replaced before the next call. Both ways are asserted, and both say why.
      const away = await outcome(
        fixture.lib.service.run(navigateOperation, 'library', session.id, {
          url: fixture.site.url('/page2.html'),
          options: { timeout: 5_000 },
        }),
      );
      if (away.code === undefined) expect(away.value!.result).toMatchObject({ status: 200 });
      else expect(away.code).toBe('navigation_timeout');
      const next = await fixture.lib.service.run(navigateOperation, 'library', session.id, { url: fixture.site.url('/page2.html') });
      expect(next.result).toMatchObject({ status: 200 });
      const events = [...(away.value?.pageEvents ?? []), ...next.pageEvents];
      expect(events.map((event) => event.type)).toContain('unresponsive');
      // The same alert asked again and again is one event with its count, not 50 that push the rest out.
      const dialogs = events.filter((event) => event.type === 'dialog');
      expect(dialogs.length).toBeLessThan(10);
      expect(dialogs.some((event) => (event.count ?? 1) > 1 && / \(\d+ times\)$/.test(event.message))).toBe(true);
      expect((await session.page.extract()).pageText).toContain('Second page');
    } finally {
      await session.end();
      await other.end();
    }
  });

  it('a navigation that times out waiting for a slow server leaves the current page in place', async () => {
    const session = await fixture.lib.startSession();
    try {
      await session.navigate(fixture.site.url('/index.html'));
      expect((await outcome(session.navigate(fixture.site.url('/slow?ms=20000'), { options: { timeout: 800 } }))).code).toBe(
        'navigation_timeout',
      );
      const next = await fixture.lib.service.run(navigateOperation, 'library', session.id, { url: fixture.site.url('/page2.html') });
      expect(next.result).toMatchObject({ status: 200 });
      // The page was waiting, not hung: it must not be reported or replaced as unresponsive.
      expect(next.pageEvents.map((event) => event.type)).not.toContain('unresponsive');
    } finally {
      await session.end();
    }
  });
});
