import { beforeAll, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { useLibrarySite } from './fixtures/library-site.js';

/**
 * What a model reads of choices and names (issue 39, items 3 and 7): every option of a list under one listener is a
 * target of its own, and a control's name is its own row's words, not a neighbour's.
 */
describe('page text: a ref for every choice, names that stay true', () => {
  const fixture = useLibrarySite();
  let session: BrowserSession;

  beforeAll(async () => {
    session = await fixture.lib.startSession();
  });

  const read = async (path: string) => {
    await session.page.goto(fixture.site.url(path));
    return (await session.page.extract()).pageText;
  };
  const lineWith = (text: string, words: string) => {
    const line = text.split('\n').find((candidate) => candidate.includes(words));
    if (!line) throw new Error(`no line with "${words}" in:\n${text}`);
    return line;
  };
  const refOf = (text: string, pattern: RegExp) => {
    const match = text
      .split('\n')
      .find((line) => pattern.test(line))
      ?.match(/\[(\d+)\] (?:[a-z]+: )?(\S.*)?/);
    if (!match) throw new Error(`no ref on a line matching ${pattern} in:\n${text}`);
    return match[1]!;
  };

  it('gives each option of a custom dropdown, a suggestion list, a pointer list and a context menu a ref of its own', async () => {
    const text = await read('/pagetext/options.html');
    for (const option of ['English', 'Deutsch', 'Polski', 'Andorra', 'Anguilla', 'Antigua and Barbuda', 'Small', 'Large', 'Cut', 'Paste']) {
      expect(text).toMatch(new RegExp(`^(- )?\\[\\d+\\] ${option}$`, 'm'));
    }
    // A card whose title and description are not like items stays one target.
    expect(lineWith(text, 'Weekly report')).toMatch(/^\[\d+\] Weekly report Sent every Monday to the team$/);
  });

  it('picks the option its ref names, where one listener on the container handles them all', async () => {
    let text = await read('/pagetext/options.html');
    await session.page.act({ ref: refOf(text, /\] Deutsch$/), method: 'click' });
    await session.page.act({ ref: refOf(text, /\] Anguilla$/), method: 'click' });
    await session.page.act({ ref: refOf(text, /\] Large$/), method: 'click' });
    await session.page.act({ ref: refOf(text, /\] Copy$/), method: 'click' });
    text = (await session.page.extract()).pageText;
    expect(text).toContain('Language: Deutsch');
    expect(text).toContain('textbox: Country = "Anguilla"');
    expect(text).toContain('Size: L');
    expect(text).toContain('Picked: Copy');
  });

  it("names a row's checkbox by its row's words, without the hover-only button beside it, and says them once", async () => {
    const text = await read('/pagetext/names.html');
    expect(lineWith(text, 'walk dog')).toMatch(/^- \[\d+\] checkbox: walk dog$/);
    expect(lineWith(text, 'buy milk')).toMatch(/^- \[\d+\] checkbox: buy milk$/);
    expect(text.match(/walk dog/g)).toHaveLength(1);
    expect(text).toMatch(/^\[\d+\] button: Delete$/m);
  });

  it('keeps inline-block tags apart', async () => {
    expect(await read('/pagetext/names.html')).toContain('Quarterly plan Marketing Team Urgent');
  });

  it("gives a tree node's expander its own node's words, not its children's, on the node's line", async () => {
    const text = await read('/pagetext/names.html');
    expect(lineWith(text, 'Dolores')).toMatch(/^ - \[\d+\] \(icon: hitarea\) \[\d+\] Dolores$/);
    expect(text).not.toMatch(/Dolores Augustus/);
    expect(lineWith(text, 'Augustus')).toMatch(/^ - \[\d+\] Augustus$/);
    const expander = refOf(text, /Dolores$/);
    expect((await session.page.act({ ref: expander, method: 'click' })).message).toContain('Dolores');
    expect((await session.page.extract()).pageText).toContain('Said: toggled Dolores');
  });

  it("gives a tree node's expand glyph a ref of its own on the node's line, and it expands", async () => {
    const text = await read('/pagetext/names.html');
    expect(text).toMatch(/^\[\d+\] Projects \[\d+\] ▸$/m);
    const glyph = text.match(/Projects \[(\d+)\] ▸/)![1]!;
    await session.page.act({ ref: glyph, method: 'click' });
    expect((await session.page.extract()).pageText).toContain('Said: expanded Projects');
  });

  it('names checkboxes labelled alike on every row by their rows, and the glyph of a named button goes', async () => {
    const text = await read('/pagetext/names.html');
    expect(text).not.toContain('Toggle Todo');
    expect(text).not.toMatch(/^\s*×$/m);
    const ref = refOf(text, /checkbox: call mum$/);
    await session.page.act({ ref, method: 'check' });
    expect((await session.page.extract()).pageText).toContain('Said: call mum true');
  });
});
