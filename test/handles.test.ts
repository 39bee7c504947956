import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { rejection } from './fixtures/rejection.js';
import { refOf } from './fixtures/refs.js';

/** Handles on everything a person can act on, and act by selector and by coordinates (library door). */
describe('handles beyond ARIA controls, act by selector and by point', () => {
  const fixture = useLibrarySite();
  let session: BrowserSession;

  beforeAll(async () => {
    session = await fixture.lib.startSession();
  });

  const open = async () => {
    await session.page.goto(fixture.site.url('/handles/index.html'));
    return (await session.page.extract()).pageText;
  };
  const read = async (selector: string) => ((await session.page.extract({ selector })) as { pageText: string }).pageText;
  const said = () => read('//p[@id="said"]');

  it('gives refs to elements with a listener, a handler property or attribute, the pointer cursor, a tab stop, a hidden control’s label', async () => {
    const text = await open();
    for (const words of [
      'Listened word',
      'Attribute word',
      'Property word',
      'Pointer card second line',
      'Tab stop',
      'label: Styled choice',
    ])
      expect(text).toMatch(new RegExp(`^\\[\\d+\\] ${words}$`, 'm'));
    // A listener on something holding controls is a root the page delegates to: its children get no ref for it.
    expect(text).toMatch(/^Delegated one$/m);
    expect(text).toMatch(/\[\d+\] textbox: inside root/);
    // One ref for the pointer card, none for its children (they inherit the cursor).
    expect(text).not.toMatch(/\[\d+\] second line/);

    const listened = refOf(text, /Listened word/);
    // The message names it by its words; "generic" would say nothing.
    expect((await session.page.act({ ref: listened, method: 'click' })).message).toBe(`Clicked [${listened}] "Listened word".`);
    expect(await said()).toBe('listened clicked');
    await session.page.act({ ref: refOf(text, /Property word/), method: 'click' });
    expect(await said()).toBe('property pressed');
    await session.page.act({ ref: refOf(text, /Pointer card/), method: 'dblclick' });
    expect(await said()).toBe('card double-clicked');
  });

  it('a drop zone holding draggable cards is named by its own words, each card keeping a ref of its own', async () => {
    const text = await open();
    expect(text).toMatch(/^\[\d+\] Column A\n \[\d+\] Card one\n \[\d+\] Card two$/m);
  });

  it('names a nameless control by its icon or the row it sits in', async () => {
    const text = await open();
    expect(text).toMatch(/\[\d+\] checkbox: buy milk/);
    expect(text).toMatch(/\[\d+\] button: Remove item/);
    // The icon says what it does, the row which one it is.
    expect(text).toMatch(/\[\d+\] button: walk dog \(icon: trash\)/);
    expect(text).toMatch(/\[\d+\] button: Share/);
    expect(text).toMatch(/\[\d+\] canvas: \d+x\d+ at \d+,\d+/);
  });

  it('keeps the refs of a whole read after a narrow read of the same document', async () => {
    const text = await open();
    const listened = refOf(text, /Listened word/);
    expect(await read('//p[@id="said"]')).toBe('nothing yet');
    await session.page.act({ ref: listened, method: 'click' });
    expect(await said()).toBe('listened clicked');
    // A ref the narrow read added is usable beside the older ones.
    const scoped = await read('//div[@id="delegated"]');
    await session.page.act({ ref: refOf(scoped, /textbox: inside root/), method: 'fill', arguments: { value: 'x' } });
    await session.page.act({ ref: refOf(text, /Attribute word/), method: 'click' });
    expect(await said()).toBe('attribute clicked');
  });

  it('acts by a Playwright selector that matches one visible element; several or none is a clear error', async () => {
    await open();
    const done = await session.page.act({ selector: 'text=Delegated two', method: 'click' });
    expect(done.message).toBe('Clicked selector "text=Delegated two".');
    expect(done.action).toMatchObject({ selector: 'text=Delegated two', method: 'click' });
    expect(await said()).toBe('delegated Delegated two');

    const twins = await rejection(session.page.act({ selector: 'css=button.twin', method: 'click' }));
    expect(twins.code).toBe('selector_ambiguous');
    expect(twins.message).toContain('matches 2 visible elements');
    expect(twins.message).toContain('"css=button.twin >> nth=1" ("Same")');
    await session.page.act({ selector: 'css=button.twin >> nth=1', method: 'click' });

    expect((await rejection(session.page.act({ selector: 'css=#nothing-here', method: 'click' }))).code).toBe('selector_not_found');
    const hidden = await rejection(session.page.act({ selector: '#cover', method: 'click' }));
    expect([hidden.code, hidden.message]).toEqual(['selector_not_found', 'The selector "#cover" matches 1 element, none of them visible.']);
    expect((await rejection(session.page.act({ selector: 'internal:has="text=x"', method: 'click' }))).code).toBe('invalid_argument');
    expect((await rejection(session.page.act({ selector: 'css=[', method: 'click' }))).code).toBe('invalid_argument');
    const both = await rejection(session.page.act({ ref: '1', selector: 'text=Tab stop', method: 'click' }));
    expect(both.message).toBe('Give one of ref, selector or x and y, not several.');
  });

  it('acts at a point of the viewport: a canvas click, a drop above an element; points outside are refused', async () => {
    const text = await open();
    const [, x, y] = /canvas: \d+x\d+ at (\d+),(\d+)/.exec(text)!.map(Number);
    const clicked = await session.page.act({ x: x! + 50, y: y! + 20, method: 'click' });
    expect(clicked.message).toBe(`Clicked the point (${x! + 50}, ${y! + 20}), canvas.`);
    expect(await said()).toBe('canvas at 50,20');

    await session.page.act({
      ref: refOf(text, /Tab stop/),
      method: 'dragTo',
      arguments: { targetSelector: 'text=Drop zone', position: { x: 10, y: 5 } },
    });
    const box = await fixture.lib.service.operate('library', session.id, (s) => s.page.locator('#drop').boundingBox());
    const [, dropX, dropY] = /dropped at (\d+),(\d+)/.exec(await said())!.map(Number);
    expect(Math.abs(dropX! - (box.result!.x + 10))).toBeLessThanOrEqual(1);
    expect(Math.abs(dropY! - (box.result!.y + 5))).toBeLessThanOrEqual(1);

    // HTML5 drag and drop, element to element by refs: the drag-start sets data, the drop reads it.
    const bin = await session.page.extract();
    await session.page.act({
      ref: refOf(bin.pageText, /Draggable card/),
      method: 'dragTo',
      arguments: { targetRef: refOf(bin.pageText, /Card bin/) },
    });
    expect(await said()).toBe('dropped the card');

    const outside = await rejection(session.page.act({ x: 5000, y: 10, method: 'click' }));
    expect(outside.message).toContain('outside the viewport (1280 x 800 CSS pixels)');
    expect((await rejection(session.page.act({ x: 10, method: 'click' }))).message).toBe('Give both x and y (viewport CSS pixels).');
    expect((await rejection(session.page.act({ x: 10, y: 10, method: 'fill', arguments: { value: 'a' } }))).code).toBe('invalid_argument');
  });

  it('shows lines that only changed places (a list reordered) as the run before and after', async () => {
    const text = await open();
    const reversed = await session.page.act({ ref: refOf(text, /button: Reverse/), method: 'click' });
    // (The click scrolled the button into view: the canvas line says where the canvas is now, too.)
    const items = (lines: string[]) => lines.filter((line) => line.startsWith('- '));
    expect({ removed: items(reversed.diff!.removed), added: items(reversed.diff!.added) }).toEqual({
      removed: ['- alpha', '- beta', '- gamma'],
      added: ['- gamma', '- beta', '- alpha'],
    });
  });

  it('says what a field really holds after fill when the page changed the value', async () => {
    const text = await open();
    const filled = await session.page.act({ ref: refOf(text, /textbox: Shouting/), method: 'type', arguments: { text: 'quiet' } });
    expect(filled.message).toBe('Typed "quiet" into [15] textbox "Shouting".'.replace('[15]', `[${refOf(text, /textbox: Shouting/)}]`));
    const again = await session.page.act({ selector: '#upper', method: 'fill', arguments: { value: 'calm' } });
    // fill sets the value without key events; the page's handler runs on input and shouts it.
    expect(again.message).toBe('Filled selector "#upper" with "calm". It now holds "CALM".');
  });

  it('keeps the refs of a list drawn again from scratch: an old ref still acts, and the diff shows only what changed', async () => {
    const text = await open();
    const bob = refOf(text, /button: Delete Bob/);
    const deleted = await session.page.act({ ref: refOf(text, /button: Delete Ann/), method: 'click' });
    // Every row is a new element now; the ones that say the same keep their numbers, so they are not in the diff.
    expect(deleted.diff!.removed).toEqual(expect.arrayContaining([expect.stringMatching(/Delete Ann/)]));
    expect([...deleted.diff!.removed, ...deleted.diff!.added].join('\n')).not.toMatch(/Delete (Bob|Cy)/);
    await session.page.act({ ref: bob, method: 'click' });
    expect(await said()).toBe('deleted Bob');
    // Each row's "Open" is told apart by the words before it: Cy's keeps its number through both redraws.
    const after = (await session.page.extract()).pageText;
    expect(refOf(after, /button: Delete Cy/)).toBe(refOf(text, /button: Delete Cy/));
    const opens = [...text.matchAll(/\[(\d+)\] button: Open/g)].map((match) => match[1]);
    expect(refOf(after, /button: Open/)).toBe(opens[2]);
  });

  it("reads the items a grid or flex box shows side by side as one line, a row's icon button after the row's words", async () => {
    const text = await open();
    expect(text).toMatch(/^Mo Tu We Th$/m);
    expect(text).toMatch(/^1 \[\d+\] 2 3 4$/m);
    await session.page.act({ ref: refOf(text, /^1 \[\d+\] 2/), method: 'click' });
    expect(await said()).toBe('picked 2');
    // Items of different heights centred on one row share it; the button's name borrowed from the row is not repeated.
    expect(text).toMatch(/^AB Ann Bell \[\d+\] button \(icon: trash\)$/m);
    // A column stays a column, and a heading keeps its own line.
    expect(text).toMatch(/^Upper item\nLower item\nLast item$/m);
    expect(text).toMatch(/^#### Card title\nbeside\nit$/m);
    // Bold shown as a block under a label keeps its words apart from the label's.
    expect(text).toMatch(/^Supplier Nordic Office$/m);
    // A drawn checkbox inside a clickable row says its state, named by its class.
    expect(text).toMatch(/^\[\d+\] Priority support \(check on\)$/m);
  });

  it('gives each cell a ref where one listener handles rows of cells (a data grid), not one ref for every row', async () => {
    const text = await open();
    expect(text).toMatch(/^\[\d+\] A1\n\[\d+\] B1$/m);
    await session.page.act({ ref: refOf(text, /\] B2$/), method: 'dblclick' });
    expect(await said()).toBe('cell B2');
  });
});
