import { beforeEach, describe, expect, it } from 'vitest';
import type { BrowserSession } from '../src/client/index.js';
import { useLibrarySite } from './fixtures/library-site.js';
import { rejection } from './fixtures/rejection.js';
import { refOf } from './fixtures/refs.js';

/** Fields say what they hold and accept (issue 39 item 6): a slider's bounds, a date's format, the field with the focus. */
describe('fields in the page text', () => {
  const fixture = useLibrarySite();
  let session: BrowserSession;
  let text: string;

  beforeEach(async () => {
    session ??= await fixture.lib.startSession();
    await session.page.goto(fixture.site.url('/act/fields.html'));
    text = (await session.page.extract()).pageText;
  });

  const read = async (options: { iframes?: boolean } = {}) => ((await session.page.extract(options)) as { pageText: string }).pageText;
  const fill = (pattern: RegExp, value: string) => session.page.act({ ref: refOf(text, pattern), method: 'fill', arguments: { value } });

  it('a slider shows its value with its bounds, and says when it runs up and down', () => {
    expect(text).toMatch(/^\[\d+\] slider: Volume = 10 \(-50\.\.50\)$/m);
    expect(text).toMatch(/^\[\d+\] slider: Brightness = 2 \(0\.\.10\)$/m);
    // A drawn slider's aria-valuetext is its value, quoted; aria-orientation says it is vertical.
    expect(text).toMatch(/^\[\d+\] slider: Level = "medium" \(1\.\.5, vertical\)$/m);
    // Native ranges laid out vertically: by writing mode, a box taller than wide, the old `appearance: slider-vertical`.
    expect(text).toMatch(/^\[\d+\] slider: Bass = 4 \(0\.\.10, vertical\)$/m);
    expect(text).toMatch(/^\[\d+\] slider: Treble = 6 \(0\.\.10, vertical\)$/m);
    expect(text).toMatch(/^\[\d+\] slider: Mid = 5 \(0\.\.10, vertical\)$/m);
  });

  it('a nameless slider whose value the page shows beside it says its value and bounds on its own line', () => {
    // Its readout (`<span>5</span>`) is the page's own text, which a control ending its line pushes onto the next one.
    expect(text).toMatch(/^\[\d+\] slider[^\n]* = 5 \(1\.\.9\)$/m);
    expect(text).toMatch(/^\[\d+\] slider[^\n]* = 30 \(0\.\.100\)/m);
  });

  it('a date or time field says what it is and the format it takes, with "format" before it once it holds a value', () => {
    expect(text).toMatch(/^\[\d+\] date: Release date = "2027-03-03" \(format yyyy-mm-dd\)$/m);
    expect(text).toMatch(/^\[\d+\] date: Return date \(yyyy-mm-dd\)$/m);
    expect(text).toMatch(/^\[\d+\] time: Start time = "09:30" \(format hh:mm\)$/m);
    expect(text).toMatch(/^\[\d+\] datetime-local: Meeting \(yyyy-mm-ddThh:mm\)$/m);
    expect(text).toMatch(/^\[\d+\] month: Billing month \(yyyy-mm\)$/m);
    expect(text).toMatch(/^\[\d+\] week: Sprint week \(yyyy-Www\)$/m);
  });

  it('only the field that has the focus says so, inside a shadow root and a frame too, and never a clicked button', async () => {
    expect(text.match(/focused/g)).toEqual(['focused']);
    expect(text).toMatch(/^\[\d+\] textbox: Note \(focused\)$/m);

    await session.page.act({ ref: refOf(text, /textbox: Coupon/), method: 'click' });
    let now = await read();
    expect(now.match(/focused/g)).toEqual(['focused']);
    expect(now).toMatch(/^\[\d+\] textbox: Coupon \(focused\)$/m);

    const framed = await read({ iframes: true });
    await session.page.act({ ref: refOf(framed, /textbox: Gift message/), method: 'click' });
    now = await read({ iframes: true });
    expect(now.match(/focused/g)).toEqual(['focused']);
    expect(now).toMatch(/^ *\[\d+-\d+\] textbox: Gift message \(focused\)$/m);

    // A button takes the focus when clicked; saying so would make every click change the page text.
    await session.page.act({ ref: refOf(text, /button: Submit/), method: 'click' });
    expect(await read({ iframes: true })).not.toContain('focused');
  });

  it("act's diff leaves out where the focus went: a field it left is no change", async () => {
    const filled = await fill(/date: Release date/, '2027-03-04');
    // The focus moved from Note to the date field: only the date's value is a change.
    expect(filled.diff!.removed).toEqual([expect.stringMatching(/date: Release date = "2027-03-03" \(format yyyy-mm-dd\)$/)]);
    expect(filled.diff!.added).toEqual([expect.stringMatching(/date: Release date = "2027-03-04" \(format yyyy-mm-dd\)$/)]);
    const clicked = await session.page.act({ ref: refOf(text, /textbox: Coupon/), method: 'click' });
    expect(clicked.pageChanged).toBe(false);
  });

  it('fill converts a date, time, month or week written another way when it reads one way only, and says so', async () => {
    const cases: Array<[RegExp, string, string]> = [
      [/date: Release date/, 'March 3, 2027', '2027-03-03'],
      [/date: Release date/, '13/03/2027', '2027-03-13'],
      [/date: Return date/, 'Wed, 3rd of Mar 2027', '2027-03-03'],
      [/date: Return date/, '04/04/2027', '2027-04-04'],
      [/time: Start time/, '9:05 pm', '21:05'],
      [/datetime-local: Meeting/, '2027-03-03 9:30 am', '2027-03-03T09:30'],
      [/month: Billing month/, 'March 2027', '2027-03'],
      [/week: Sprint week/, '2027 w9', '2027-W09'],
    ];
    for (const [pattern, given, held] of cases) {
      const result = await fill(pattern, given);
      expect(result.message).toMatch(new RegExp(`with "${given}" as "${held}"\\.$`));
      expect((await read()).split('\n').find((line) => pattern.test(line))).toContain(`= "${held}"`);
    }
    // A value already in the field's format goes in as it is.
    expect((await fill(/date: Return date/, '2027-12-31')).message).toMatch(/with "2027-12-31"\.$/);
  });

  it('fill of a date it cannot read one way answers invalid_argument naming the format, and leaves the field as it was', async () => {
    const ambiguous = await rejection(fill(/date: Release date/, '01/11/2018'));
    expect(ambiguous.code).toBe('invalid_argument');
    expect(ambiguous.message).toMatch(
      /takes a date as yyyy-mm-dd, and "01\/11\/2018" could be 2018-01-11 or 2018-11-01\. Give it as yyyy-mm-dd\./,
    );
    const unreadable = await rejection(fill(/date: Release date/, 'next Friday'));
    expect(unreadable.code).toBe('invalid_argument');
    expect(unreadable.message).toMatch(/"next Friday" cannot be read as one date\. Give it as yyyy-mm-dd\./);
    expect((await rejection(fill(/date: Release date/, '2027-02-30'))).code).toBe('invalid_argument');
    expect((await rejection(fill(/time: Start time/, '25:00'))).message).toMatch(/takes a time as hh:mm/);
    expect(await read()).toMatch(/date: Release date = "2027-03-03"/);
  });
});
