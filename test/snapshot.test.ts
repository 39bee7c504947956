import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { isServiceError } from '../src/core/errors.js';
import type { Session } from '../src/core/sessions.js';
import { resolveRef, takeSnapshot, type PageSnapshot, type SnapshotOptions } from '../src/core/snapshot/index.js';
import { ROOT } from './fixtures/mcp-stdio.js';
import { useSiteService } from './fixtures/site-service.js';

const GOLDEN_DIR = new URL('./golden/', import.meta.url);
const GOLDEN_PAGES = [
  'article',
  'table',
  'form',
  'shadow',
  'frames-same',
  'long-list',
  'late',
  'widgets',
  'hidden',
  'images',
  'docs',
  'inbox',
  'wiki',
  'pricing',
  'comments',
  'rtl',
  'meta',
];

describe('page text (takeSnapshot, resolveRef)', () => {
  const fixture = useSiteService();
  let id: string;

  beforeAll(async () => {
    id = (await fixture.service.startSession('t')).id;
  });

  const on = async <T>(work: (session: Session) => Promise<T>): Promise<T> => (await fixture.service.operate('t', id, work)).result;
  const open = (path: string) => on((session) => session.page.goto(fixture.site.url(path)).then(() => undefined));
  const read = (options: SnapshotOptions = {}) => on((session) => takeSnapshot(session, options));
  const snap = async (path: string, options: SnapshotOptions = {}) => {
    await open(path);
    return read(options);
  };
  const codeOf = async (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (err: unknown) => (isServiceError(err) ? err.code : String(err)),
    );
  /** The ref of the first line that contains `text`. */
  const refOf = (snapshot: PageSnapshot, text: string) => {
    const line = snapshot.text.split('\n').find((l) => l.includes(text));
    const ref = line?.match(/\[(\d+(?:-\d+)?)\]|\]\((\d+(?:-\d+)?)\)/);
    if (!ref) throw new Error(`no ref on a line with "${text}" in:\n${snapshot.text}`);
    return ref[1] ?? ref[2]!;
  };

  it.each(GOLDEN_PAGES)('page text of %s matches its golden file', async (page) => {
    const snapshot = await snap(`/pages/${page}.html`, { iframes: page.startsWith('frames') });
    // Ref numbers depend on the order elements were first read; the frame part (inside iframes) and the place of each ref are asserted.
    const text = snapshot.text.replace(/\[(\d+-)?\d+\] /g, '[$1#] ').replace(/\]\((\d+-)?\d+\)/g, ']($1#)');
    // The runner's file snapshot: a missing one fails under CI (it is written only by `vitest -u` or a local run).
    await expect(`${text}\n`).toMatchFileSnapshot(fileURLToPath(new URL(`${page}.txt`, GOLDEN_DIR)));
  });

  it("lists a native select's options on its line and lets a model pick one by label", async () => {
    await open('/pages/form.html');
    const options = Array.from({ length: 40 }, (_, i) => `<option>Land ${i}</option>`).join('');
    await on((session) => session.page.setContent(`<label>Country <select>${options}</select></label>`));
    const snapshot = await read();
    expect(snapshot.text).toContain('options: Land 0 | Land 1 | ');
    expect(snapshot.text).toContain('| Land 29 | … (10 more)');
    expect(snapshot.text).not.toContain('Land 30');
    await on(async (session) => (await resolveRef(session, refOf(snapshot, 'combobox: Country'))).selectOption({ label: 'Land 35' }));
    expect((await read()).text).toContain('combobox: Country = "Land 35"');
  });

  it('labels a link without a name by the last segment of its path, never the whole URL', async () => {
    await open('/pages/form.html');
    const href = '/es/2022/01/25/espanol/beatles-get-back.html?campaign=7JFJX&redirect_uri=https%3A%2F%2Fexample.com%2Fa%2Fb';
    await on((session) =>
      session.page.setContent(
        `<p>Before <a href="${href}"><img src="/none.png" alt=""></a> after</p><p><a href="/"><img src="/none.png" alt=""></a></p>`,
      ),
    );
    const snapshot = await read();
    expect(snapshot.text).toContain('[beatles-get-back.html](');
    // A site's root has no path segment: its host stands in.
    expect(snapshot.text).toContain(`[${new URL(fixture.site.url('/')).hostname}](`);
    expect(snapshot.text).not.toContain('campaign');
    const ref = refOf(snapshot, 'beatles-get-back.html');
    expect(snapshot.refs.get(ref)?.href).toBe(fixture.site.url(href));
  });

  it('keeps the lines and indentation of preformatted text, and collapses other whitespace', async () => {
    await open('/pages/form.html');
    await on((session) =>
      session.page.setContent('<p>Some   spaced\n text</p><pre><code>def f(x):\n    return x + 1\n\nprint(f(2))</code></pre>'),
    );
    const snapshot = await read();
    expect(snapshot.text).toBe('Some spaced text\ndef f(x):\n    return x + 1\nprint(f(2))');
  });

  it('keeps on-screen text inside aria-hidden regions, in place, and leaves out the ones not rendered', async () => {
    await open('/pages/form.html');
    await on((session) =>
      session.page.setContent(
        '<p>Before the ribbon.</p><nav aria-hidden="true"><ol><li><a href="/a"><h2>Putin reaches toward Poland</h2></a></li><li><a href="/b"><h2>Key moments of the hearings</h2></a></li></ol></nav>' +
          '<p>After the ribbon.</p><div aria-hidden="true" style="visibility:hidden"><ul><li><a href="/c">Not rendered</a></li></ul></div>',
      ),
    );
    const snapshot = await read();
    expect(snapshot.text).toBe('Before the ribbon.\nPutin reaches toward Poland\nKey moments of the hearings\nAfter the ribbon.');
  });

  it('includes open and closed shadow roots and clicks inside both by ref', async () => {
    const snapshot = await snap('/pages/shadow.html');
    expect(snapshot.text).toContain('Text inside an open shadow root.');
    expect(snapshot.text).toContain('Text inside a closed shadow root.');
    for (const [label, status] of [
      ['Open action', 'open clicked'],
      ['Closed action', 'closed clicked'],
    ] as const) {
      await on(async (session) => (await resolveRef(session, refOf(snapshot, label))).click({ timeout: 5_000 }));
      expect(await on((session) => session.page.locator('#status').textContent())).toBe(status);
    }
    await on(async (session) => (await resolveRef(session, refOf(snapshot, 'Closed field'))).fill('deep', { timeout: 5_000 }));
    expect(await on((session) => session.page.locator('#status').textContent())).toBe('closed typed deep');
  });

  it('types into an input and reports link hrefs by ref in the main frame', async () => {
    const snapshot = await snap('/pages/form.html');
    await on(async (session) => (await resolveRef(session, `[${refOf(snapshot, 'textbox: Full name')}]`)).fill('Ada', { timeout: 5_000 }));
    expect(await on((session) => session.page.locator('#status').textContent())).toBe('typed Ada');
    const signIn = snapshot.refs.get(refOf(snapshot, 'Sign in'));
    expect(signIn).toMatchObject({ role: 'link', name: 'Sign in', href: fixture.site.url('/pages/form.html#login'), frameId: '0' });
  });

  it("keeps the main frame's ref table out of the page's reach: clicks by ref work and the page's world has no trace of it", async () => {
    const snapshot = await snap('/pages/form.html');
    const symbolsBefore = await on((session) => session.page.evaluate(() => Object.getOwnPropertySymbols(window).length));
    await on(async (session) => (await resolveRef(session, refOf(snapshot, 'textbox: Full name'))).fill('Grace', { timeout: 5_000 }));
    expect(await on((session) => session.page.locator('#status').textContent())).toBe('typed Grace');
    const seen = await on((session) =>
      session.page.evaluate(() => ({
        symbols: Object.getOwnPropertySymbols(window).length,
        table: (window as unknown as Record<symbol, unknown>)[Symbol.for('bsm.refs')] !== undefined,
      })),
    );
    expect(seen).toEqual({ symbols: symbolsBefore, table: false });
  });

  it("resolves refs on a page whose Playwright utility-world script was made before the process's first ref", async () => {
    // A fresh process: the ref engines are registered once per process, before its first browser context.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/first-ref-in-process.ts', fixture.site.url('/pages/form.html')],
      { cwd: ROOT, timeout: 90_000 },
    );
    const outcome = JSON.parse(stdout.trim().split('\n').at(-1)!) as { textboxes: number; typed: number; failures: string[] };
    expect(outcome.failures).toEqual([]);
    expect(outcome.textboxes).toBeGreaterThanOrEqual(3);
    expect(outcome.typed).toBe(outcome.textboxes);
  }, 120_000);

  it('gives every visible interactive element a ref', async () => {
    for (const page of ['form', 'article', 'table', 'shadow', 'long-list']) {
      const snapshot = await snap(`/pages/${page}.html`);
      // Each ref's locator marks the element it finds (the ref table itself is out of the page's reach).
      await on((session) => session.page.evaluate(() => ((window as unknown as { marked: Set<Element> }).marked = new Set())));
      for (const ref of snapshot.refs.keys())
        await on(async (session) =>
          (await resolveRef(session, ref)).evaluate((el) => (window as unknown as { marked: Set<Element> }).marked.add(el)),
        );
      const missing = await on((session) =>
        session.page.evaluate(`(() => {
          const marked = window.marked;
          const all = [...document.querySelectorAll('a[href], button, input, select, textarea')];
          for (const host of document.querySelectorAll('*')) if (host.shadowRoot) all.push(...host.shadowRoot.querySelectorAll('a[href], button, input, select, textarea'));
          return all.filter((el) => el.checkVisibility() && !marked.has(el)).map((el) => el.outerHTML);
        })()`),
      );
      expect(missing, page).toEqual([]);
    }
  });

  it('shows an iframe as one line unless iframes is true (same origin)', async () => {
    const off = await snap('/pages/frames-same.html');
    expect(off.text).toMatch(/\[\d+\] iframe: Newsletter signup \(has content; read it with iframes: true\)/);
    expect(off.text).not.toContain('Weekly news');
    const frameElement = await on(async (session) =>
      (await resolveRef(session, refOf(off, 'iframe: Newsletter signup'))).evaluate((el) => el.tagName),
    );
    expect(frameElement).toBe('IFRAME');
    // Without inlined frames, main-frame refs are bare numbers; the frame-qualified form names the same element.
    const iframeRef = refOf(off, 'iframe: Newsletter signup');
    expect(iframeRef).toMatch(/^\d+$/);
    expect(await on(async (session) => (await resolveRef(session, `0-${iframeRef}`)).evaluate((el) => el.tagName))).toBe('IFRAME');
    const on_ = await read({ iframes: true });
    expect(refOf(on_, 'iframe: Newsletter signup')).toBe(`0-${iframeRef}`);
    expect(on_.text).toMatch(/\] iframe: Newsletter signup\n {1}## Newsletter\n {1}Weekly news from inside the frame\./);
    const subscribe = refOf(on_, 'button: Subscribe');
    expect(subscribe.split('-')[0]).not.toBe('0');
    await on(async (session) => (await resolveRef(session, refOf(on_, 'textbox: Your email'))).fill('a@b.c', { timeout: 5_000 }));
    await on(async (session) => (await resolveRef(session, subscribe)).click({ timeout: 5_000 }));
    const frameStatus = await on((session) => session.frame(subscribe.split('-')[0]!).locator('#fstatus').textContent());
    expect(frameStatus).toBe('frame clicked a@b.c');
  });

  it('inlines a cross-origin (out-of-process) iframe with frame-qualified refs that resolve', async () => {
    await open('/pages/frames-cross.html');
    await on((session) =>
      session.page.waitForFunction(() => window.frames.length === 1).then(() => session.page.frames()[1]!.waitForLoadState()),
    );
    const off = await read();
    expect(off.text).toMatch(/\[\d+\] iframe: Partner widget \(has content; read it with iframes: true\)/);
    const snapshot = await read({ iframes: true });
    expect(snapshot.text).toContain('Weekly news from inside the frame.');
    const subscribe = refOf(snapshot, 'button: Subscribe');
    const frameId = subscribe.split('-')[0]!;
    expect(frameId).not.toBe('0');
    expect(await on(async (session) => session.frame(frameId).url())).toContain('//localhost:');
    await on(async (session) => (await resolveRef(session, subscribe)).click({ timeout: 5_000 }));
    expect(await on((session) => session.frame(frameId).locator('#fstatus').textContent())).toBe('frame clicked ');
  });

  it('limits the text to an XPath subtree, with or without the xpath= prefix', async () => {
    await open('/pages/table.html');
    const scoped = await read({ selector: '//table[1]' });
    expect(scoped.text.split('\n')[0]).toBe('Revenue and operating profit, 2023');
    expect(scoped.text).not.toContain('Quarterly results by region');
    expect(scoped.text).not.toContain('Group Finance');
    const prefixed = await read({ selector: 'xpath=//h2/following-sibling::p' });
    expect(prefixed.text).toBe(
      'Q4 includes a one-off gain of 12.4 million from the sale of the logistics unit in Poland. DACH covers Germany, Austria and Switzerland.',
    );
    expect(prefixed.refs.size).toBe(0);
  });

  it('fails on a selector that matches nothing or is not XPath', async () => {
    await open('/pages/table.html');
    expect(await codeOf(read({ selector: '//section[@id="nope"]' }))).toBe('selector_not_found');
    expect(await codeOf(read({ selector: 'xpath=//table[' }))).toBe('invalid_argument');
    expect(await codeOf(read({ selector: '   ' }))).toBe('invalid_argument');
  });

  it('waits for a late-rendering page to settle before reading', async () => {
    const snapshot = await snap('/pages/late.html');
    expect(snapshot.text).toContain('Order 4711 has shipped.');
    expect(snapshot.text).toContain('Parcel 4 of 4');
  });

  it('waits after a change inside a same-origin frame, so what it set off in the page is read too', async () => {
    await open('/frame-message.html');
    await on((session) =>
      session.page.waitForFunction(() => window.frames.length === 1).then(() => session.page.frames()[1]!.waitForLoadState()),
    );
    expect((await read()).text).toContain('waiting');
    await on((session) => session.page.frames()[1]!.click('#go'));
    // The main document has not changed yet when the read starts; the frame has.
    expect((await read()).text).toContain('parent got hello');
  });

  it('reads what is there when domSettleTimeoutMs runs out first', async () => {
    const snapshot = await snap('/pages/late.html', { domSettleTimeoutMs: 0 });
    expect(snapshot.text).toContain('Loading your order');
  });

  it('rejects an unknown ref and a ref whose element is gone', async () => {
    const snapshot = await snap('/pages/form.html');
    expect(await codeOf(on((session) => resolveRef(session, '0-999999')))).toBe('ref_not_found');
    const ref = refOf(snapshot, 'button: Create account');
    await on((session) => session.page.evaluate(() => document.querySelector('button')!.remove()));
    expect(await codeOf(on((session) => resolveRef(session, ref)))).toBe('ref_not_found');
  });

  it('lays text out as the page shows it: inline pieces apart, MathML tokens together, blocks without a role apart, an onclick anchor a link', async () => {
    await open('/pages/form.html');
    await on((session) =>
      session.page.setContent(
        '<p>By <span>Ana</span> <span>Ruiz</span></p>' +
          '<p>When <math><mi>\n a \n</mi> <mo> ≠ </mo>\n<mn> 0 </mn></math> it holds.</p>' +
          '<a onclick="this.textContent = \'shared\'">Share on Facebook</a>' +
          '<div role="presentation">First block</div><div role="none">Second block</div>',
      ),
    );
    const snapshot = await read();
    expect(snapshot.text).toContain('By Ana Ruiz');
    expect(snapshot.text).toContain('When a≠0 it holds.');
    expect(snapshot.text.split('\n')).toEqual(expect.arrayContaining(['First block', 'Second block']));
    const share = refOf(snapshot, 'Share on Facebook');
    await on(async (session) => (await resolveRef(session, share)).click());
    expect((await read()).text).toContain('shared');
  });

  it("reads a page that has replaced the page's own builtins, since it reads from an isolated world", async () => {
    await open('/pages/form.html');
    await on((session) =>
      session.page.evaluate(() => {
        JSON.stringify = () => '"tampered"';
        Array.prototype.map = () => [];
        Object.defineProperty(window, 'getComputedStyle', { value: () => ({ display: 'none' }) });
      }),
    );
    const snapshot = await read();
    expect(snapshot.text).toContain('[#] button: Create account'.replace('#', refOf(snapshot, 'Create account')));
    await on(async (session) => (await resolveRef(session, refOf(snapshot, 'button: Clear form'))).click());
  });

  // Chromium's own layout crashes the renderer somewhere between 2,000 and 5,000 levels (innerText alone does it).
  it('reads a page nested 2,000 elements deep, keeping the words below the depth it reads as structure', async () => {
    await open('/pages/form.html');
    await on((session) =>
      session.page.evaluate(() => {
        let parent: HTMLElement = document.body;
        for (let i = 0; i < 2_000; i++) parent = parent.appendChild(document.createElement('div'));
        parent.append('the deepest words');
        parent.appendChild(document.createElement('button')).textContent = 'Deep button';
      }),
    );
    const snapshot = await read();
    expect(snapshot.text).toContain('the deepest words');
    expect(snapshot.text).toContain('Deep button');
    expect(snapshot.text).toContain('button: Create account');
  });

  it('fails with timeout, not a hang, on a page stuck in a script loop', async () => {
    const other = (await fixture.service.startSession('t')).id;
    try {
      await fixture.service.operate('t', other, (session) => session.page.goto(fixture.site.url('/pages/loop.html')));
      // The page starts its loop 300 ms after loading: wait until a trivial script no longer answers within 200 ms.
      const page = fixture.service.sessions.get(other, 't').page;
      const answers = () => Promise.race([page.evaluate(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, 200, false))]);
      await expect.poll(answers, { timeout: 10_000 }).toBe(false);
      const started = Date.now();
      const code = await codeOf(
        fixture.service.operate('t', other, (session) => takeSnapshot(session, { domSettleTimeoutMs: 500, callTimeoutMs: 1_500 })),
      );
      expect(code).toBe('timeout');
      // Unbounded, the read would wait for the loop forever; a few bounded calls end well inside this.
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      await fixture.service.endSession('t', other).catch(() => undefined);
    }
  });
});
