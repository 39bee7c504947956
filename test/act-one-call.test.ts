import { beforeAll, describe, expect, it } from 'vitest';
import { actDoors, shownLines, type Door } from './fixtures/act-doors.js';
import { startStdioServer, type StdioServer } from './fixtures/mcp-stdio.js';
import { useSiteHttp } from './fixtures/site-http.js';

/**
 * What a person does in one go, in one act call: press and hold, right-click, fill and submit, a key pressed several
 * times. The page (test/sites/act/one-call.html) only rewards the real gesture: a hold under 1 s, a left click on the
 * card or a fill without Enter change nothing.
 */
describe('act: one call for one gesture', () => {
  const fixture = useSiteHttp();
  let stdio: StdioServer;

  beforeAll(async () => {
    stdio = await startStdioServer();
    return () => stdio.close();
  }, 180_000);

  const doors = actDoors(fixture, () => stdio);

  /** The ref of the first line matching `pattern` in a page text. */
  const refOf = (text: string, pattern: RegExp): string => {
    const line = text.split('\n').find((candidate) => pattern.test(candidate));
    const ref = line && /\[(\d+)\]/.exec(line)?.[1];
    if (!ref) throw new Error(`no ref for ${pattern} in:\n${text}`);
    return ref;
  };

  describe.each(Object.keys(doors))('over %s', (name) => {
    let door: Door;
    let page: string;
    beforeAll(async () => {
      door = await doors[name]!();
      page = await door.navigate(fixture.site.url('/act/one-call.html'));
    });

    it('click {delay} presses and holds: a 1.2 s hold is rewarded where a click is not, and the result says so', async () => {
      const hold = refOf(page, /button: Hold to confirm/);
      const quick = await door.act({ action: { ref: hold, method: 'click' } });
      expect(quick.result!.diff!.added).toContain('Released too soon');
      const held = await door.act({ action: { ref: hold, method: 'click', arguments: { delay: 1200 } } });
      expect(held.result!.message).toMatch(/^Clicked \[\d+\] button "Hold to confirm", holding the button 1200 ms\./);
      expect(held.result!.diff!.added).toContain('Held long enough');
    });

    it('click {delay} at a point holds too, and a hold past the bound is refused naming it', async () => {
      const tooLong = await door.act({ action: { x: 10, y: 10, method: 'click', arguments: { delay: 60_000 } } });
      expect(tooLong.error).toMatchObject({ code: 'invalid_argument' });
      expect(tooLong.error!.message).toMatch(/delay/);
    });

    it('a card with only a contextmenu listener has a ref of its own, and click {button: "right"} opens its menu, said as a right-click', async () => {
      const card = refOf(page, /Quarterly report/);
      expect(page.split('\n').find((line) => line.includes('Quarterly report'))).not.toMatch(/Hold to confirm|New todo/);
      const opened = await door.act({ action: { ref: card, method: 'click', arguments: { button: 'right' } } });
      expect(opened.result!.message).toMatch(/^Right-clicked \[\d+\] "Quarterly report/);
      expect(opened.result!.diff!.added).toContain('Menu open for Quarterly report');
      expect(opened.result!.diff!.added.join('\n')).toMatch(/menuitem: Rename/);
    });

    it('fill {submit: true} fills and presses Enter: the entry is added in one call', async () => {
      const field = refOf(page, /textbox: New todo/);
      const added = await door.act({ action: { ref: field, method: 'fill', arguments: { value: 'buy oat milk', submit: true } } });
      expect(added.result!.message).toBe(`Filled [${field}] textbox "New todo" with "buy oat milk" and pressed Enter.`);
      expect(added.result!.diff!.added).toContain('- buy oat milk');
    });

    it('actions runs several in order in one call: one diff from before the first to after the last, a line each', async () => {
      const plus = refOf(page, /button: Add one/);
      const twenty = Array.from({ length: 20 }, () => ({ ref: plus, method: 'click' }));
      const done = await door.act({ actions: twenty });
      expect(done.result).toMatchObject({ success: true, message: 'Did 20 actions.' });
      expect(done.result!.steps).toHaveLength(20);
      expect(done.result!.steps![19]).toMatchObject({ message: `Clicked [${plus}] button "Add one".` });
      expect(done.result!.diff).toEqual({ added: ['Count: 20'], removed: ['Count: 0'] });
    });

    it('actions stops at the first that fails and says which; one that cannot work is refused before any runs', async () => {
      const plus = refOf(page, /button: Add one/);
      const click = { ref: plus, method: 'click' };
      const stopped = await door.act({ actions: [click, { ref: '9999', method: 'click' }, click] });
      expect(stopped.result).toMatchObject({
        success: false,
        message: 'Did 1 of 3 actions: action 2 failed.',
        failed: { step: 2, code: 'ref_not_found' },
      });
      expect(stopped.result!.diff!.added).toEqual(['Count: 21']);
      const refused = await door.act({ actions: [click, click, { ref: plus, method: 'fill' }] });
      expect(refused.error).toMatchObject({ code: 'invalid_argument' });
      expect(refused.error!.message).toMatch(/^actions\.2: /);
      const again = await door.act({ action: click });
      expect(again.result!.diff!.added).toEqual(['Count: 22']);
    });

    it('selectText selects words in a textarea and across formatting in an editor, and a toolbar then formats them', async () => {
      const editor = await door.navigate(fixture.site.url('/act/editor.html'));
      const notes = refOf(editor, /textbox: Notes/);
      const picked = await door.act({ action: { ref: notes, method: 'selectText', arguments: { text: 'brown' } } });
      expect(picked.error).toBeUndefined();
      expect(picked.result!.message).toBe(`Selected "brown" in [${notes}] textbox "Notes".`);
      expect(picked.result!.diff!.added).toContain('Picked: brown');
      const story = refOf(editor, /textbox: Story/);
      const across = await door.act({ action: { ref: story, method: 'selectText', arguments: { text: 'upon a time' } } });
      expect(across.error).toBeUndefined();
      expect(across.result!.message).toBe(`Selected "upon a time" in [${story}] textbox "Story".`);
      const underlined = await door.act({ action: { ref: refOf(editor, /button: Underline/), method: 'click' } });
      expect(underlined.result!.diff!.added).toContain('Underlined: upon a time');
      // The word again, further on: occurrence picks which one.
      const second = await door.act({ action: { ref: story, method: 'selectText', arguments: { text: 'a', occurrence: 3 } } });
      expect(second.result!.message).toBe(`Selected "a" (occurrence 3) in [${story}] textbox "Story".`);
      const twice = await door.act({ action: { ref: refOf(editor, /button: Underline/), method: 'click' } });
      expect(twice.result!.diff!.added).toContain('Underlined: upon a time a');
      const missing = await door.act({ action: { ref: story, method: 'selectText', arguments: { text: 'dragon' } } });
      expect(missing.error).toMatchObject({ code: 'invalid_argument' });
      expect(missing.error!.message).toContain('"dragon" is not in');
      page = await door.navigate(fixture.site.url('/act/one-call.html'));
    });

    it('check on a row the page draws again answers what the page shows at once, not a timeout, and never clicks twice', async () => {
      const chores = await door.navigate(fixture.site.url('/act/redraw.html'));
      const dog = refOf(chores, /checkbox: walk dog/);
      const checked = await door.act({ action: { ref: dog, method: 'check' } });
      expect(checked.error).toBeUndefined();
      expect(checked.result!.message).toMatch(new RegExp(`^Checked \\[${dog}\\] checkbox "walk dog"; the page redrew it\\.`));
      expect(shownLines(checked.result!)).toContain('1 left');
      // The ref read before the redraw: the element it named is gone, so it is refused at once or acts on the new one.
      const milk = await door.act({ action: { ref: refOf(chores, /checkbox: buy milk/), method: 'check' } });
      expect(milk.error).toBeUndefined();
      expect(shownLines(milk.result!)).toContain('0 left');
      page = await door.navigate(fixture.site.url('/act/one-call.html'));
    });

    it("a submit the browser's own validation stopped says which fields it refused and why; a valid one says nothing", async () => {
      const form = await door.navigate(fixture.site.url('/act/validate.html'));
      const [email, age, send] = [/textbox: Email/, /spinbutton: Age/, /button: Send/].map((pattern) => refOf(form, pattern));
      await door.act({
        actions: [
          { ref: email, method: 'fill', arguments: { value: 'bob' } },
          { ref: age, method: 'fill', arguments: { value: '12' } },
        ],
      });
      const refused = await door.act({ action: { ref: send, method: 'click' } });
      expect(refused.result!.message).toMatch(
        /^Clicked \[\d+\] button "Send"\. The form was not sent: the browser refused fields: "Email": .*@.*; "Age": .*18/,
      );
      expect(refused.result!.pageChanged).toBe(false);
      const byEnter = await door.act({ action: { ref: email, method: 'fill', arguments: { value: 'bob@example.com', submit: true } } });
      expect(byEnter.result!.message).toMatch(/The form was not sent: the browser refused a field: "Age": /);
      await door.act({ action: { ref: age, method: 'fill', arguments: { value: '30' } } });
      const sent = await door.act({ action: { ref: send, method: 'click' } });
      expect(sent.result!.message).toBe(`Clicked [${send}] button "Send".`);
      expect(sent.result!.diff!.added).toContain('Sent');
      page = await door.navigate(fixture.site.url('/act/one-call.html'));
    });

    it('press {times} presses a key N times and says where a range or a drawn slider ended', async () => {
      const volume = refOf(page, /slider: Volume/);
      const moved = await door.act({ action: { ref: volume, method: 'press', arguments: { key: 'ArrowRight', times: 7 } } });
      expect(moved.result!.message).toBe(`Pressed ArrowRight 7 times on [${volume}] slider "Volume". It now holds "57".`);
      const brightness = refOf(page, /slider: Brightness/);
      const drawn = await door.act({ action: { ref: brightness, method: 'press', arguments: { key: 'ArrowRight', times: 3 } } });
      expect(drawn.result!.message).toMatch(/It now holds "5"\.$/);
      const tooMany = await door.act({ action: { ref: volume, method: 'press', arguments: { key: 'ArrowLeft', times: 1000 } } });
      expect(tooMany.error).toMatchObject({ code: 'invalid_argument' });
    });
  });
});
