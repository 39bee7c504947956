import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { actDoors, type Door } from './fixtures/act-doors.js';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { useSiteHttp } from './fixtures/site-http.js';

/** A bound, not a benchmark: a covered element used to cost the whole 10 s timeout. */
const FAST_MS = 3_000;

/**
 * An element another one covers (a dialog, its backdrop), or one that does not take the pointer, is refused at once
 * with `element_covered`, naming the cover as the page text does; a cover that fades within the grace is waited out.
 * The page: test/sites/act/cover.html.
 */
describe('act: a covered element is named at once', () => {
  const fixture = useSiteHttp();
  let stdio: StdioServer;

  beforeAll(async () => {
    stdio = await startStdioServer();
    return () => stdio.close();
  }, 180_000);

  const doors = actDoors(fixture, () => stdio);

  /** The ref of the first line matching `pattern` in a page text (or its lines). */
  const refOf = (text: string | string[], pattern: RegExp): string => {
    const line = (Array.isArray(text) ? text : text.split('\n')).find((candidate) => pattern.test(candidate));
    const ref = line && /\[(\d+)\]/.exec(line)?.[1];
    if (!ref) throw new Error(`no ref for ${pattern} in:\n${String(text)}`);
    return ref;
  };

  /** The act call's answer and how long it took. */
  const timed = async (door: Door, body: Record<string, unknown>) => {
    const started = Date.now();
    const answer = await door.act(body);
    return { ...answer, ms: Date.now() - started };
  };

  describe.each(Object.keys(doors))('over %s', (name) => {
    let door: Door;
    let page: string;
    beforeAll(async () => {
      door = await doors[name]!();
    });
    beforeEach(async () => {
      page = await door.navigate(fixture.site.url('/act/cover.html'));
    });

    it('a dialog over the target is element_covered at once, naming the dialog and the buttons in it', async () => {
      const buy = refOf(page, /button: Buy/);
      const opened = await door.act({ action: { ref: refOf(page, /button: Cookie settings/), method: 'click' } });
      const reject = refOf(opened.result!.diff!.added, /button: Reject/);
      const covered = await timed(door, { action: { ref: buy, method: 'click' } });
      expect(covered.error?.code, JSON.stringify(covered)).toBe('element_covered');
      expect(covered.ms).toBeLessThan(FAST_MS);
      expect(covered.error!.message).toMatch(
        new RegExp(
          `^dialog "Cookie settings" covers \\[${buy}\\] button "Buy" \\(in it: \\[\\d+\\] button "Accept all", \\[${reject}\\] button "Reject"\\), so click did not happen\\. Close or answer it first`,
        ),
      );
      expect(covered.error!.details).toEqual({ cover: 'dialog "Cookie settings"' });
      // Hover is a pointer action too.
      const hovered = await timed(door, { action: { ref: buy, method: 'hover' } });
      expect([hovered.error?.code, hovered.ms < FAST_MS]).toEqual(['element_covered', true]);
      // Once the dialog is answered, the same ref works.
      await door.act({ action: { ref: reject, method: 'click' } });
      expect((await door.act({ action: { ref: buy, method: 'click' } })).result!.diff!.added).toContain('Bought 1');
    });

    it("a backdrop is named by its dialog; a caller's shorter timeoutMs still names the cover", async () => {
      await door.act({ action: { ref: refOf(page, /button: Cookie settings/), method: 'click' } });
      const sell = refOf(page, /button: Sell/);
      const covered = await timed(door, { action: { ref: sell, method: 'click' } });
      expect(covered.error?.code).toBe('element_covered');
      expect(covered.ms).toBeLessThan(FAST_MS);
      expect(covered.error!.message).toMatch(
        new RegExp(
          `^the backdrop of dialog "Cookie settings" \\(\\[(\\d+)\\] div with class "backdrop"\\) covers \\[${sell}\\] button "Sell" \\(in it: .*\\[\\d+\\] button "Reject"\\)`,
        ),
      );
      // The backdrop has a ref of its own (an overlay to dismiss): the details carry it.
      const backdrop = /\[(\d+)\] div/.exec(covered.error!.message)![1];
      expect(covered.error!.details).toMatchObject({ coverRef: backdrop });
      const quick = await timed(door, { action: { selector: 'text=Sell', method: 'click' }, timeoutMs: 400 });
      expect(quick.error?.code).toBe('element_covered');
      expect(quick.error!.message).toMatch(/^the backdrop of dialog "Cookie settings" .* covers selector "text=Sell"/);
    });

    it('a cover that fades away within the grace does not fail the click', async () => {
      // settleMs 0: the next call starts while the toast (gone after 900 ms) still covers Buy.
      await door.act({ action: { ref: refOf(page, /button: Flash sale/), method: 'click' }, settleMs: 0 });
      const bought = await door.act({ action: { ref: refOf(page, /button: Buy/), method: 'click' } });
      expect(bought.error).toBeUndefined();
      expect(bought.result!.diff!.added).toContain('Bought 1');
    });

    it('an element that does not take the pointer (the page itself is hit there) says why, at once', async () => {
      const command = refOf(page, /option: Open file/);
      const refused = await timed(door, { action: { ref: command, method: 'click' } });
      expect(refused.error?.code).toBe('element_covered');
      expect(refused.ms).toBeLessThan(FAST_MS);
      expect(refused.error!.message).toMatch(
        new RegExp(
          `^\\[${command}\\] option "Open file" does not take the pointer \\(pointer-events: none on <ul id="palette">\\): click at \\(\\d+, \\d+\\) would reach what is behind it, so it did not happen\\. .*keyboard`,
        ),
      );
    });

    it('an element off the viewport that scrolling cannot bring in says so, at once', async () => {
      const refused = await timed(door, { action: { selector: '#archive', method: 'click' } });
      expect(refused.error?.code).toBe('element_covered');
      expect(refused.ms).toBeLessThan(FAST_MS);
      expect(refused.error!.message).toMatch(
        /^selector "#archive" lies outside the viewport at \(-\d+, \d+\), and scrolling does not bring it in .*, so click did not happen\./,
      );
    });
  });
});
