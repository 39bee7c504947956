import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { MAX_TABS } from '../src/core/session/pages.js';
import { REFS } from '../src/core/snapshot/refs.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { rejection } from './fixtures/rejection.js';
import { refOf } from './fixtures/refs.js';

/** What act refuses leaves nothing behind, and is refused for the right reason (library door, real Chromium). */
describe('act refusals', () => {
  const fixture = useLibrarySite();
  let session: BrowserSession;

  beforeAll(async () => {
    session = await fixture.lib.startSession({ blockUrls: ['**/blocked/**'] });
  });

  const internal = () => fixture.lib.service.sessions.get(session.id, 'library');
  const tabs = () => session.info().tabs;

  it('a refused or failed newTab leaves no tab, and the tab before it stays active', async () => {
    await session.navigate(fixture.site.url('/index.html'));
    const before = tabs();
    expect(before).toHaveLength(1);
    // More refusals than the tab limit: each one used to leave a blank tab, active, until the limit refused everything.
    for (let i = 0; i < MAX_TABS; i++) {
      const refused = await rejection(session.page.act({ method: 'newTab', arguments: { url: fixture.site.url(`/blocked/${i}.html`) } }));
      expect(refused.code).toBe('navigation_failed');
      expect(tabs()).toEqual(before);
    }
    expect((await rejection(session.page.act({ method: 'newTab', arguments: { url: 'file:///etc/passwd' } }))).code).toBe(
      'url_not_allowed',
    );
    expect(tabs()).toEqual(before);
    expect(internal().page.url()).toBe(fixture.site.url('/index.html'));

    const opened = await session.page.act({ method: 'newTab', arguments: { url: fixture.site.url('/page2.html') } });
    expect(opened.message).toMatch(/^Opened .*\/page2\.html in new tab t\d+\.$/);
    expect(tabs().map((tab) => [tab.url, tab.active])).toEqual([
      [fixture.site.url('/index.html'), false],
      [fixture.site.url('/page2.html'), true],
    ]);
    await session.page.act({ method: 'closeTab', arguments: { tabId: tabs()[1]!.tabId } });
  });

  it('refuses a selector by the engine of each of its parts, before the page runs any of it', async () => {
    await session.navigate(fixture.site.url('/handles/index.html'));
    for (const [selector, engine] of [
      ['css=body >> internal:has="text=Tab stop"', 'internal:has'],
      ['css=body >> internal:control=component', 'internal:control'],
      ['Internal:text="Tab stop"', 'Internal:text'],
      ['css=body >> _react=Foo', '_react'],
      ['text=Tab stop >> _vue=Foo', '_vue'],
      ['bsm-iref=1', 'bsm-iref'],
    ] as const) {
      const refused = await rejection(session.page.act({ selector, method: 'hover' }));
      expect([refused.code, refused.message], selector).toEqual([
        'invalid_argument',
        `selector ${JSON.stringify(selector)} uses the engine "${engine}", which act does not take; use css=, xpath=, text=, role=, id=, data-testid=, nth=, visible=, or a getBy* locator's (internal:role=, internal:label=, ...).`,
      ]);
    }
    const unparsed = await rejection(session.page.act({ selector: 'css=div:has(internal:text="x")', method: 'hover' }));
    expect([unparsed.code, unparsed.message]).toEqual([
      'invalid_argument',
      expect.stringMatching(/^selector "css=div:has\(internal:text=\\"x\\"\)" is not a valid Playwright selector: Unexpected token/),
    ]);
    // Public engines, chained, still work; Playwright's `*` capture of a public engine too.
    await session.page.act({ selector: 'css=body >> text=Tab stop', method: 'hover' });
    await session.page.act({ selector: 'role=textbox >> nth=0', method: 'hover' });
    await session.page.act({ selector: 'css=body >> *text=Tab stop', method: 'hover' });
    // The getBy* locators' engines, as a session's script writes them (codegen's), and a step into a frame.
    await session.page.act({ selector: 'internal:text="Tab stop"i', method: 'hover' });
    await session.page.act({ selector: 'css=body >> internal:role=textbox >> nth=0', method: 'hover' });
  });

  it('a renderer crash during a selector lookup is page_crashed, and the next call runs on a fresh page', async () => {
    await session.navigate(fixture.site.url('/hostile/huge-dom.html?rows=2000'));
    const { context, page } = internal();
    const cdp = await context.newCDPSession(page);
    // An XPath that takes the renderer minutes on 8,000 elements: the lookup is under way when the renderer dies.
    const acting = rejection(session.page.act({ selector: 'xpath=//*[count(//*[count(//*) > 0]) < 0]', method: 'click' }));
    const answers = () =>
      Promise.race([
        cdp.send('Runtime.evaluate', { expression: '1' }).then(() => true),
        new Promise<boolean>((resolve) => setTimeout(resolve, 300, false)),
      ]);
    await expect.poll(answers, { timeout: 15_000, interval: 50 }).toBe(false);
    void cdp.send('Page.crash').catch(() => undefined);
    const crashed = await acting;
    expect(crashed.code).toBe('page_crashed');
    expect(crashed.message).not.toMatch(/selector/);
    expect((await session.navigate(fixture.site.url('/page2.html'))).data.result).toMatchObject({ status: 200 });
  });

  it('keeps the ref of an element still on the page past 20,000 refs read in one document', async () => {
    await session.navigate(fixture.site.url('/pages/ref-feed.html'));
    const keep = refOf((await session.page.extract()).pageText, /button: Keep me/);
    const feed = (count: number) =>
      fixture.lib.service.operate('library', session.id, (s) => s.page.evaluate((n) => window.nextFeed(n), count));
    // Each round replaces the feed with 5,000 buttons of new words (new refs): the fourth read passes 20,000 refs.
    for (let round = 1; round <= 4; round++) {
      await feed(5_000);
      const text = (await session.page.extract()).pageText;
      expect(refOf(text, /button: Keep me/)).toBe(keep);
      await session.page.act({ ref: keep, method: 'click' });
      expect(await internal().page.textContent('#said')).toBe(`kept ${round}`);
    }
    // The table stays bounded: the oldest refs, of feeds long gone, made way.
    expect(internal().state.get(REFS).size).toBeLessThanOrEqual(20_000);
  });
});

declare global {
  interface Window {
    nextFeed(count: number): void;
  }
}
