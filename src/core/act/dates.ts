/**
 * Values for date and time fields. Such a field takes one format (INPUT_FORMATS: `yyyy-mm-dd`, `hh:mm`, ...) and the
 * browser empties it, without a word, when fill gives it anything else: a value a person would write (`March 3,
 * 2027`, `9:30 pm`, `13/03/2027`) is put in that format when it can be read one way only.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * The ways `given` can be read as a value of a `type` field (date, time, datetime-local, month, week), in that field's
 * format: one reading, several (`01/11/2018`: January 11 or November 1), or none.
 */
export function dateReadings(type: string, given: string): string[] {
  const text = given.trim();
  switch (type) {
    case 'date':
      return dates(text);
    case 'time': {
      const time = timeOf(text);
      return time ? [time] : [];
    }
    case 'datetime-local':
      return dateTimes(text);
    case 'month':
      return months(text);
    case 'week':
      return weeks(text);
    default:
      return [text];
  }
}

/** `2027-03-03`, `2027/3/3`; `3/13/2027` and `13.3.2027` (the day told by being over 12); `March 3, 2027`, `3 Mar 2027`. */
function dates(text: string): string[] {
  const plain = text.replace(/^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+/i, '');
  const iso = /^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})$/.exec(plain);
  if (iso) return dateOf(+iso[1]!, +iso[2]!, +iso[3]!);
  const numeric = /^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$/.exec(plain);
  if (numeric) {
    const [a, b, year] = [+numeric[1]!, +numeric[2]!, +numeric[3]!];
    return [...new Set([...dateOf(year, a, b), ...dateOf(year, b, a)])];
  }
  const words = wordsOf(plain);
  if (words.length !== 3) return [];
  const month = words.map(monthOf).filter((m) => m > 0);
  const year = words.filter((word) => /^\d{4}$/.test(word));
  const day = words.filter((word) => /^\d{1,2}$/.test(word));
  return month.length === 1 && year.length === 1 && day.length === 1 ? dateOf(+year[0]!, month[0]!, +day[0]!) : [];
}

/** A date and a time: `2027-03-03T09:30`, `2027-03-03 9:30 pm`, `March 3, 2027 at 21:30`. */
function dateTimes(text: string): string[] {
  const parts = /^(.+?)(?:T|,?\s+(?:at\s+)?)(\d{1,2}(?::\d{2}){0,2}\s*(?:[ap]\.?m\.?)?)$/i.exec(text);
  if (!parts) return [];
  const time = timeOf(parts[2]!);
  return time ? dates(parts[1]!.trim()).map((date) => `${date}T${time}`) : [];
}

/** `2027-03`, `3/2027`, `March 2027`. */
function months(text: string): string[] {
  const iso = /^(\d{4})[-/.](\d{1,2})$/.exec(text);
  const numeric = /^(\d{1,2})[-/.](\d{4})$/.exec(text);
  const words = wordsOf(text);
  const [year, month] = iso
    ? [+iso[1]!, +iso[2]!]
    : numeric
      ? [+numeric[2]!, +numeric[1]!]
      : words.length === 2 && /^\d{4}$/.test(words[1]!)
        ? [+words[1]!, monthOf(words[0]!)]
        : [0, 0];
  return year && month >= 1 && month <= 12 ? [`${year}-${pad(month)}`] : [];
}

/** `2027-W09`, `2027 w9`, `week 9 2027`. */
function weeks(text: string): string[] {
  const found = /^(\d{4})\s*-?\s*w(?:eek)?\s*(\d{1,2})$/i.exec(text);
  const after = /^w(?:eek)?\s*(\d{1,2}),?\s+(\d{4})$/i.exec(text);
  const [year, week] = found ? [+found[1]!, +found[2]!] : after ? [+after[2]!, +after[1]!] : [0, 0];
  return year && week >= 1 && week <= weeksIn(year) ? [`${year}-W${pad(week)}`] : [];
}

/** `09:30`, `9:30`, `21:30:15`, `9 am`, `9:30 p.m.` as `hh:mm` (24-hour), with seconds when given. */
function timeOf(text: string): string | undefined {
  const found = /^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(?:([ap])\.?\s*m\.?)?$/i.exec(text.trim());
  if (!found || (found[2] === undefined && found[4] === undefined)) return undefined;
  let hours = +found[1]!;
  const [minutes, seconds, half] = [+(found[2] ?? 0), found[3], found[4]?.toLowerCase()];
  if (half) {
    if (hours < 1 || hours > 12) return undefined;
    hours = (hours % 12) + (half === 'p' ? 12 : 0);
  }
  if (hours > 23 || minutes > 59 || (seconds !== undefined && +seconds > 59)) return undefined;
  return `${pad(hours)}:${pad(minutes)}${seconds === undefined ? '' : `:${seconds}`}`;
}

/** The words of a date written out: `3rd of March, 2027` is `3`, `march`, `2027`. */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/(\d)(st|nd|rd|th)\b/g, '$1')
    .split(/[\s,./-]+/)
    .filter((word) => word && word !== 'of');
}

/** 1 to 12 for a month's name or its abbreviation (`Sept.`), else 0. */
function monthOf(word: string): number {
  const name = word.toLowerCase().replace(/\.$/, '');
  const index = MONTHS.indexOf(name.slice(0, 3));
  return index >= 0 && name.length >= 3 && /^[a-z]+$/.test(name) ? index + 1 : 0;
}

/** `[yyyy-mm-dd]` when the date exists, else none. */
function dateOf(year: number, month: number, day: number): string[] {
  const exists = year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
  return exists ? [`${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`] : [];
}

/** ISO weeks in a year: 53 when it starts on a Thursday, or is a leap year starting on a Wednesday. */
function weeksIn(year: number): number {
  const first = new Date(Date.UTC(year, 0, 1)).getUTCDay();
  const leap = new Date(Date.UTC(year, 1, 29)).getUTCMonth() === 1;
  return first === 4 || (leap && first === 3) ? 53 : 52;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
