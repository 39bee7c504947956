import { beforeAll, describe, expect, it } from 'vitest';
import type { ActResult, ObserveResult } from '../src/core/act/index.js';
import { actOperation, extractOperation, navigateOperation, observeOperation } from '../src/core/operations/index.js';
import type { Session } from '../src/core/sessions.js';
import { MAX_FRAME_DEPTH, MAX_FRAMES } from '../src/core/snapshot/frames.js';
import { takeSnapshot, type SnapshotOptions } from '../src/core/snapshot/index.js';
import { useSiteService } from './fixtures/site-service.js';

const OWNER = 't';

/** Frames an app makes after load, six deep, of every kind (test/sites/pages/frames-nested-spa.html), and the bounds. */
describe('page text of nested frames', () => {
  const fixture = useSiteService();
  let id: string;

  beforeAll(async () => {
    id = (await fixture.service.startSession(OWNER)).id;
  });

  const on = async <T>(work: (session: Session) => Promise<T>): Promise<T> => (await fixture.service.operate(OWNER, id, work)).result;
  const read = (options: SnapshotOptions = {}) => on((session) => takeSnapshot(session, options));
  const pageText = async () => ((await fixture.service.run(extractOperation, OWNER, id, {})).result as { pageText: string }).pageText;
  /** The ref on the first line matching `pattern`. */
  const refOf = (text: string, pattern: RegExp) => {
    const ref = text
      .split('\n')
      .find((line) => pattern.test(line))
      ?.match(/\[(\d+(?:-\d+)?)\]/)?.[1];
    if (!ref) throw new Error(`no ref for ${pattern} in:\n${text}`);
    return ref;
  };
  /** Waits until the app has built its sixth frame and the button in it, under the top page's frame `first`. */
  const builtSixDeep = (first = 0) =>
    on((session) =>
      session.page.waitForFunction((top) => {
        let view: Window | undefined = window.frames[top];
        for (let level = 1; level < 6 && view; level++) view = view.frames[0];
        return view?.document.getElementById('secret') != null;
      }, first),
    );

  it('reads all six levels of frames an app builds after load without being asked, and the deepest button clicks by its ref', async () => {
    await fixture.service.run(navigateOperation, OWNER, id, { url: fixture.site.url('/pages/frames-nested-spa.html') });
    await builtSixDeep();
    const text = await pageText();
    // The app's root holds React-style delegated listeners: it is a container, not one clickable line hiding the frames.
    expect(text).toMatch(/^Find and click the button hidden in the nested iframes!$/m);
    const levels = ['Level 1 of 6', 'Level 2 of 6', 'Level 3 of 6', 'Level 4 of 6', 'Level 5 of 6', 'Level 6 of 6'].map((words) =>
      text.split('\n').find((line) => line.includes(words)),
    );
    expect(levels.every(Boolean), text).toBe(true);
    // Each level is indented under the one that holds it.
    const indents = levels.map((line) => line!.length - line!.trimStart().length);
    expect(indents).toEqual([...indents].sort((a, b) => a - b));
    expect(new Set(indents).size).toBe(6);
    const vault = refOf(text, /button: Open the vault/);
    expect(vault).toMatch(/^[1-9]\d*-\d+$/);
    expect(refOf(text, /iframe: Level 1/)).toMatch(/^0-\d+$/);

    const observed = (await fixture.service.run(observeOperation, OWNER, id, {})).result as ObserveResult;
    expect(observed.actions.map((action) => action.ref)).toContain(vault);

    const acted = (await fixture.service.run(actOperation, OWNER, id, { action: { ref: vault, method: 'click' } })).result as ActResult;
    expect(acted.success).toBe(true);
    await on((session) => session.page.waitForFunction(() => document.getElementById('goal')?.textContent === 'Challenge complete!'));
  });

  it('keeps small frames one line each unless asked, with bare refs', async () => {
    await fixture.service.run(navigateOperation, OWNER, id, { url: fixture.site.url('/pages/frames-same.html') });
    const text = await pageText();
    expect(text).toMatch(/^\[\d+\] iframe: Newsletter signup \(has content; read it with iframes: true\)$/m);
    expect((await read({ iframes: true })).text).toContain('Weekly news from inside the frame.');
    expect((await read({ iframes: false })).text).not.toContain('Weekly news');
  });

  it('reads a frame the page made or replaced after the frames were stamped', async () => {
    await fixture.service.run(navigateOperation, OWNER, id, { url: fixture.site.url('/pages/frames-nested-spa.html') });
    await builtSixDeep();
    expect((await read({ iframes: true })).text).toContain('button: Open the vault');
    // A copy of a stamped iframe element carries the stamp of a frame that is gone; its new frame is found all the same.
    await on((session) =>
      session.page.evaluate(() => {
        const old = document.querySelector('iframe')!;
        old.replaceWith(old.cloneNode());
      }),
    );
    await builtSixDeep();
    const text = (await read()).text;
    expect(text).toContain('button: Open the vault');
    expect(text).not.toContain('frame not loaded');
    // Two elements with one stamp (a copy beside its original): each is read as the frame it holds.
    await on((session) =>
      session.page.evaluate(() => {
        const first = document.querySelector('iframe')!;
        first.after(first.cloneNode());
      }),
    );
    await builtSixDeep(1);
    const both = (await read()).text;
    const vaults = both.split('\n').filter((line) => line.includes('button: Open the vault'));
    expect(vaults).toHaveLength(2);
    const frameIds = vaults.map((line) => refOf(line, /vault/).split('-')[0]);
    expect(new Set(frameIds).size).toBe(2);
    // Each copy's levels are frames of their own: no ref is given twice.
    const refs = both.match(/\[\d+-\d+\]/g)!;
    expect(new Set(refs).size).toBe(refs.length);
  });

  it(`reads at most ${MAX_FRAMES} frames and ${MAX_FRAME_DEPTH} levels, and says so where it stops`, async () => {
    await fixture.service.run(navigateOperation, OWNER, id, { url: fixture.site.url('/pages/form.html') });
    await on((session) =>
      session.page.evaluate(
        ([many, deep]: [number, number]) => {
          document.body.innerHTML = '<div id="many"></div><div id="deep"></div>';
          for (let n = 1; n <= many; n++) {
            const frame = document.createElement('iframe');
            frame.style.cssText = 'width: 80px; height: 30px';
            document.getElementById('many')!.appendChild(frame);
            frame.contentDocument!.body.innerHTML = `<button>Frame ${n}</button>`;
          }
          let doc = document;
          for (let level = 1; level <= deep; level++) {
            const frame = doc.createElement('iframe');
            (level === 1 ? doc.getElementById('deep')! : doc.body).appendChild(frame);
            doc = frame.contentDocument!;
            doc.body.innerHTML = `<p>Depth ${level}</p>`;
          }
        },
        [100, MAX_FRAME_DEPTH + 2] as [number, number],
      ),
    );
    const started = performance.now();
    const text = (await read({ iframes: true, selector: '//div[@id="many"]' })).text;
    const elapsed = performance.now() - started;
    expect(text).toContain(`button: Frame ${MAX_FRAMES}`);
    expect(text).not.toContain(`button: Frame ${MAX_FRAMES + 1}`);
    expect(text.match(/\(frame not read: the page text reads at most \d+ frames\)/g)).toHaveLength(100 - MAX_FRAMES);
    expect(elapsed).toBeLessThan(15_000);

    const deep = (await read({ iframes: true, selector: '//div[@id="deep"]' })).text;
    expect(deep).toContain(`Depth ${MAX_FRAME_DEPTH}`);
    expect(deep).not.toContain(`Depth ${MAX_FRAME_DEPTH + 1}`);
    expect(deep).toContain(`(frame not read: the page text reads frames nested at most ${MAX_FRAME_DEPTH} deep)`);
  });
});
