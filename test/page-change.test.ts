import { describe, expect, it } from 'vitest';
import { diffLines } from '../src/core/act/index.js';
import { pageChange } from '../src/core/act/page-change.js';
import type { LastRead } from '../src/core/snapshot/last-read.js';

const read = (lines: string[]): LastRead => ({ text: lines.join('\n'), url: 'https://shop.test/', document: 'doc-1', iframes: false });
const change = (before: string[], after: string[], maxTokens = 2_000) =>
  pageChange(read(before), read(after), 'https://shop.test/', maxTokens);

const panel = (last: string, average: string, episodes: string) => [
  '# Task',
  'Select the words that name a colour, then press Submit. The episode ends when you submit or the time runs out.',
  '[2] checkbox: red',
  '[3] checkbox: table',
  '[4] checkbox: green',
  '[5] button: Submit',
  'Last reward',
  last,
  'Last 10 average',
  average,
  'Episodes done',
  episodes,
  '[1] button: Next episode',
];

const NAMES = ['Ana', 'Ben', 'Cleo', 'Dan', 'Eva', 'Finn', 'Gus', 'Hana', 'Ivo', 'Jana', 'Kai', 'Lea', 'Max', 'Nia', 'Otto'];
const orders = NAMES.map((name, i) => ({ name, amount: ((i * 37) % 97) * 10 + 15 }));
const table = (rows: typeof orders) => [
  '# Orders',
  'Orders from the last quarter, with the customer, the city they ordered from and the amount in euros.',
  '[1] button: Sort by amount',
  '| Customer | Amount |',
  ...rows.map((row) => `| ${row.name} | ${row.amount} EUR |`),
  'Showing all orders.',
];

const CATALOGUE = [
  ['Apple', '$0.89'],
  ['Banana', '$0.25'],
  ['Lemon', '$0.89'],
  ['Mango', '$1.99'],
  ['Bell Pepper', '$0.89'],
  ['Carrot', '$0.25'],
  ['Cucumber', '$0.89'],
  ['Leek', '$1.49'],
];
const shop = (page: number) => [
  '# Market',
  'navigation:',
  ' [Fruit](1) [Vegetables](2) [Bakery](3)',
  'Fresh produce delivered the next morning, from farms within fifty kilometres of the city.',
  ...CATALOGUE.slice(page * 4, page * 4 + 4).flatMap(([name, price], i) => [
    `### ${name}`,
    price!,
    `[${10 + page * 4 + i}] button: Add ${name} to cart`,
    ' Add to cart',
  ]),
  `Page ${page + 1} of 2`,
  '[8] button: Previous page',
  '[9] button: Next page',
  'contentinfo:',
  ' Prices include VAT. Delivery is free from 30 EUR, and orders placed before noon arrive the next morning.',
];

describe('the page change act answers', () => {
  it('keeps the label of a value that changed: the unchanged line above it, in page order', () => {
    const result = change(panel('0', '0', '0'), panel('1', '0.99', '1'));
    expect(result.diff).toEqual({
      added: ['1', '0.99', '1'],
      removed: ['0', '0', '0'],
      lines: ['  Last reward', '- 0', '+ 1', '  Last 10 average', '- 0', '+ 0.99', '  Episodes done', '- 0', '+ 1'],
    });
    expect(result).toMatchObject({ pageChanged: true, navigated: false });
    expect(result.pageText).toBeUndefined();
  });

  it('answers a line that names itself as removed then added, with no lines of its own', () => {
    const before = ['# Counter', '[1] button: Add one', 'Count: 0'];
    expect(change(before, ['# Counter', '[1] button: Add one', 'Count: 20']).diff).toEqual({ added: ['Count: 20'], removed: ['Count: 0'] });
    expect(change(before, before)).toEqual({ pageChanged: false, navigated: false, diff: { added: [], removed: [] } });
  });

  it('shows a table sorted in its new order: the old rows in one line, the new ones in order', () => {
    const sorted = [...orders].sort((a, b) => a.amount - b.amount);
    const result = change(table(orders), table(sorted));
    const rows = table(sorted).filter((line) => line.endsWith('EUR |'));
    // Ana (15 EUR) was first and stays first: the rest moved.
    expect(result.diff!.added).toEqual(rows.slice(1));
    expect(result.diff!.removed).toEqual(
      table(orders)
        .filter((line) => line.endsWith('EUR |'))
        .slice(1),
    );
    expect(result.diff!.lines).toEqual([`- 14 lines (| Ben | 385 EUR | … | Otto | 345 EUR |)`, ...rows.slice(1).map((row) => `+ ${row}`)]);
  });

  it('keeps each product with its price on a shop page that pages in place, even where the prices repeat', () => {
    const result = change(shop(0), shop(1));
    expect(result.pageText).toBeUndefined();
    expect(result.diff!.lines).toEqual([
      '- 17 lines (### Apple … Page 1 of 2)',
      ...shop(1)
        .slice(4, 21)
        .map((line) => `+ ${line}`),
    ]);
    expect(result.diff!.lines!.slice(1, 4)).toEqual(['+ ### Bell Pepper', '+ $0.89', '+ [14] button: Add Bell Pepper to cart']);
    expect(result.diff!.added.at(-1)).toBe('Page 2 of 2');
  });

  it('says a long run of removed lines in one line, and keeps the last beside the line that replaced it', () => {
    const items = [
      'Profile',
      'Orders',
      'Invoices',
      'Returns',
      'Addresses',
      'Payment',
      'Alerts',
      'Privacy',
      'Security',
      'Language',
      'Help',
      'Sign out',
      'Settings',
    ];
    const menu = items.map((item, i) => `[${4 + i}] menuitem: ${item}`);
    const form = ['[20] textbox: Name = "Ana Ruiz"', '[21] textbox: Email = "ana@example.com"', '[22] checkbox: Newsletter (checked)'];
    const result = change(
      ['# Account', '[2] button: Menu', ...menu, 'Nothing saved', '[3] button: Save', ...form],
      ['# Account', '[2] button: Menu', 'Settings saved', '[3] button: Save', ...form],
    );
    expect(result.diff!.lines).toEqual([
      '- 13 lines ([4] menuitem: Profile … [16] menuitem: Settings)',
      '- Nothing saved',
      '+ Settings saved',
    ]);
    expect(result.diff!.removed).toEqual([...menu, 'Nothing saved']);
    expect(result.diff!.added).toEqual(['Settings saved']);
  });

  it('answers the page text instead when the change would cost more to read than the page', () => {
    const before = ['# Quiz', 'Question 1 of 3', 'Which city is the capital of Austria?', '[1] radio: Vienna', '[2] radio: Graz'];
    const after = ['# Quiz', 'Question 2 of 3', 'Which river flows through Budapest?', '[3] radio: Danube', '[4] radio: Rhine'];
    const result = change(before, after);
    expect(result).toMatchObject({ pageChanged: true, navigated: false, pageText: after.join('\n') });
    // The lines added and removed are there still, for a client that reads them.
    expect(result.diff).toEqual({ added: after.slice(1), removed: before.slice(1) });
  });

  it('cuts the change to maxTokens in page order; the added and removed lines are those it shows', () => {
    const before = ['# Log', 'Status: idle', ...Array.from({ length: 40 }, (_, i) => `Entry ${i} of the log that stays as it was`)];
    const after = [
      '# Log',
      'Status: loading',
      ...before.slice(2),
      ...Array.from({ length: 300 }, (_, i) => `Row ${i + 1} of the long list that was loaded on demand`),
    ];
    const result = change(before, after, 100);
    expect(result.truncated).toMatch(/^Cut to maxTokens 100: added: \d+ of 301 lines shown, \d+ lines \(\d+ tokens\) left out\. Read/);
    expect(result.diff!.removed).toEqual(['Status: idle']);
    expect(result.diff!.added.slice(0, 2)).toEqual(['Status: loading', 'Row 1 of the long list that was loaded on demand']);
    expect(result.diff!.added.length).toBeLessThan(20);
  });

  it('finds a few changes on a 50,000-line page exactly, and answers a page rewritten throughout with its text', () => {
    const page = Array.from({ length: 50_000 }, (_, i) => `- Item ${i}: a line of a very long page`);
    const edited = page.map((line, i) => (i === 120 ? '- Item 120: changed' : i === 40_000 ? '- Item 40000: changed' : line));
    expect(diffLines(page, edited)).toEqual({
      added: ['- Item 120: changed', '- Item 40000: changed'],
      removed: [page[120], page[40_000]],
      lines: [`- ${page[120]}`, '+ - Item 120: changed', `- ${page[40_000]}`, '+ - Item 40000: changed'],
    });
    // Every seventh line changed: more edits than the diff's bound, so the middle counts as replaced whole.
    const rewritten = page.map((line, i) => (i % 7 === 3 ? `${line} (edited)` : line));
    const result = change(page, rewritten);
    expect(result).toMatchObject({ pageChanged: true, navigated: false });
    expect(result.pageText!.split('\n')[0]).toBe(page[0]);
    expect(result.truncated).toMatch(/^Cut to maxTokens 2000: pageText \d+ of 50000 lines shown/);
  });

  it('answers removed and added lines as subsequences of the pages, balanced, for any pair of short pages', () => {
    const random = (seed: number) => {
      let state = seed;
      return () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    };
    const next = random(39);
    const page = () => Array.from({ length: Math.floor(next() * 14) }, () => 'abcde'[Math.floor(next() * 5)]!);
    const subsequence = (part: string[], whole: string[]) => {
      let at = 0;
      for (const line of whole) if (at < part.length && part[at] === line) at++;
      return at === part.length;
    };
    for (let i = 0; i < 500; i++) {
      const [a, b] = [page(), page()];
      const { added, removed, lines } = diffLines(a, b);
      expect(subsequence(removed, a) && subsequence(added, b), JSON.stringify({ a, b, added, removed })).toBe(true);
      expect(a.length - removed.length).toBe(b.length - added.length);
      expect(lines.filter((line) => line.startsWith('+ '))).toEqual(added.map((line) => `+ ${line}`));
    }
  });
});
