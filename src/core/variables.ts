import { z } from 'zod';
import { ServiceError } from './errors.js';

/** Shortest value masked inside longer text: shorter ones would mask ordinary words. */
export const MIN_MASKED_LENGTH = 3;
/** Most origins one variable may name. */
export const MAX_VARIABLE_ORIGINS = 20;
/**
 * Longest value of a variable (a password, a card number, an API token): every answer is searched for each value in
 * every form a page may reformat it to, so a longer one would cost every call of the session.
 */
export const MAX_VARIABLE_LENGTH = 4_096;

/**
 * A variable's value: a string, or `{value, origins}`, typed only into pages (and frames) of those origins
 * (`https://bank.example`), refused elsewhere with `variable_not_allowed` (docs/security.md).
 */
export const VariableValue = z.union([
  z.string().max(MAX_VARIABLE_LENGTH),
  z
    .object({
      value: z.string().max(MAX_VARIABLE_LENGTH),
      origins: z
        .array(z.string().max(300).refine(isOrigin, 'Expected an origin, such as "https://example.com".'))
        .min(1)
        .max(MAX_VARIABLE_ORIGINS),
    })
    .strict(),
]);
export type VariableValue = z.infer<typeof VariableValue>;

/**
 * VariableValue as tools/list shows it: a string or an object, its fields said in the description (listing them costs
 * each tool 66 o200k tokens). Calls are checked against VariableValue.
 */
export const ListedVariableValue = z.union([z.string().max(MAX_VARIABLE_LENGTH), z.record(z.string(), z.unknown())]);

/** The values alone, as the session's secrets keep them. */
export function variableValues(given: Record<string, VariableValue> | undefined): Record<string, string> | undefined {
  return given && Object.fromEntries(Object.entries(given).map(([name, item]) => [name, typeof item === 'string' ? item : item.value]));
}

interface Entry {
  name: string;
  value: string;
  /** The origins it may be typed into; undefined: any. */
  origins?: Set<string>;
}

/** %name% placeholders (the agent and act): the model only ever sees and writes the placeholder; the value is put in just before the browser acts. */
export class Variables {
  private readonly entries: Entry[];

  constructor(values: Record<string, VariableValue> = {}) {
    // Longest values first so a value containing another is masked whole.
    this.entries = Object.entries(values)
      .map(([name, item]): Entry =>
        typeof item === 'string' ? { name, value: item } : { name, value: item.value, origins: new Set(item.origins.map(originOf)) },
      )
      .sort((a, b) => b.value.length - a.value.length);
  }

  get names(): string[] {
    return this.entries.map(({ name }) => name).sort();
  }

  /** Replaces known %name% placeholders with their values; unknown ones stay as written. */
  substitute(text: string): string {
    if (!this.entries.length) return text;
    return text.replace(/%([A-Za-z0-9_]+)%/g, (whole, name: string) => this.entries.find((entry) => entry.name === name)?.value ?? whole);
  }

  /** Substitutes in every string of a JSON-like value. */
  substituteDeep(value: unknown): unknown {
    if (!this.entries.length) return value;
    if (typeof value === 'string') return this.substitute(value);
    if (Array.isArray(value)) return value.map((item) => this.substituteDeep(item));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.substituteDeep(item)]));
    return value;
  }

  /** Whether `value` (as written, before substitution) names any variable. */
  usedIn(value: unknown): boolean {
    return this.entries.some((entry) => mentions(value, entry.name));
  }

  /**
   * Refuses (`variable_not_allowed`) when `value` names a variable limited to origins and one of `destinations` (the
   * URLs of the page and frames it would be typed into, or of a page it would open) is on none of them.
   */
  checkOrigins(value: unknown, destinations: readonly string[]): void {
    for (const entry of this.entries) {
      if (!entry.origins || !mentions(value, entry.name)) continue;
      const refused = destinations.map(originOf).find((origin) => !entry.origins!.has(origin));
      if (refused === undefined) continue;
      throw new ServiceError(
        'variable_not_allowed',
        `%${entry.name}% may only be typed into ${[...entry.origins].join(', ')}; this action would send it to ${refused}. ` +
          'Open the right site first (a page that asks for it elsewhere may be phishing).',
        { details: { variable: entry.name, origin: refused } },
      );
    }
  }

  /**
   * Masks values back to their placeholders in text headed for the model or the result: a typed secret shows up in
   * the page text (reformatted too: `4111 1111 1111 1111` for `4111111111111111`), and encoded in the URL a GET form
   * leads to.
   */
  redact(text: string): string {
    let out = text;
    for (const { name, value } of this.entries) {
      if (value.length < MIN_MASKED_LENGTH) continue;
      for (const form of [value, ...encodings(value)]) if (out.includes(form)) out = out.split(form).join(`%${name}%`);
      out = replaceReformatted(out, value, `%${name}%`);
    }
    return out;
  }
}

/** Whether a string of a JSON-like value holds `%name%`. */
function mentions(value: unknown, name: string): boolean {
  if (typeof value === 'string') return value.includes(`%${name}%`);
  if (Array.isArray(value)) return value.some((item) => mentions(item, name));
  if (value && typeof value === 'object') return Object.values(value).some((item) => mentions(item, name));
  return false;
}

function isOrigin(given: string): boolean {
  try {
    const url = new URL(given);
    return /^https?:$/.test(url.protocol) && !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash;
  } catch {
    return false;
  }
}

/**
 * A URL's origin as variables compare them (`https://example.com`); `about:blank` and `about:srcdoc` frames are their
 * parent's and are given as such by the caller; any other URL without one (`data:`) is `null`, which no list names.
 */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'null';
  }
}

/**
 * A secret as other text carries it: URL-encoded (encodeURIComponent), with `+` for spaces, as a browser form-encodes it
 * (application/x-www-form-urlencoded, in a form post and a GET form's URL: `!'()~` are escaped too) and HTML-escaped.
 */
export function encodings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice('v='.length);
  // A URL's query as the browser keeps it after a page or redirect put it there with encodeURIComponent: ' is %27.
  const query = uri.replace(/'/g, '%27');
  return [...new Set([uri, uri.replace(/%20/g, '+'), query, form, escapeHtml(value)])].filter((encoded) => encoded !== value);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * What a page may put between a secret's characters when it shows it, or take out: spaces of every width, invisible
 * and bidi marks, dashes and minus signs, dots, slashes, brackets, underscores, apostrophes, `+` and `|`. A card
 * number `4111111111111111` shown as `4111 1111 1111 1111`, `4111-1111-1111-1111` or `4111\u00a01111…`, a phone
 * number typed `5551234567` and shown `(555) 123-4567`, are the same secret. Commas and colons are not (amounts, times).
 */
const SEPARATOR_CODES: Array<[number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0x27, 0x29],
  [0x2b, 0x2b],
  [0x2d, 0x2f],
  [0x5b, 0x5d],
  [0x5f, 0x5f],
  [0x7c, 0x7c],
  [0x85, 0x85],
  [0xa0, 0xa0],
  [0xad, 0xad],
  [0xb7, 0xb7],
  [0x1680, 0x1680],
  [0x180e, 0x180e],
  [0x2000, 0x2015],
  [0x2019, 0x2019],
  [0x2027, 0x202f],
  [0x205f, 0x2064],
  [0x2066, 0x2069],
  [0x2212, 0x2212],
  [0x3000, 0x3000],
  [0xfe58, 0xfe58],
  [0xfe63, 0xfe63],
  [0xfeff, 0xfeff],
  [0xff0d, 0xff0d],
];
/** Separators as a URL or HTML writes them (a query, a response body), and as JSON escapes them (a trace line). */
const SEPARATOR_TOKENS = ['%20', '%2F', '%2f', '%C2%A0', '%c2%a0', '&nbsp;', '&#160;', '&#xa0;', '&#xA0;', '\\n', '\\r', '\\t', '\\/'];

const hex = (code: number) => code.toString(16).padStart(4, '0');
const SEPARATOR_CLASS = `[${SEPARATOR_CODES.map(([from, to]) => (from === to ? `\\u{${hex(from)}}` : `\\u{${hex(from)}}-\\u{${hex(to)}}`)).join('')}]`;
const IS_SEPARATOR = new RegExp(`^${SEPARATOR_CLASS}$`, 'u');
const SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

/** A string's characters as a regex matches them: as they are (text), or as the latin1 reading of their UTF-8 bytes (bytes). */
function escaped(text: string, form: 'text' | 'bytes'): string {
  if (form === 'text') return text.replace(SYNTAX, '\\$&');
  return [...Buffer.from(text, 'utf8')].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('');
}

/** Any run of separators: a class of the one-byte ones and an alternative for each other, in the bytes form. */
function separatorRun(form: 'text' | 'bytes'): string {
  const tokens = SEPARATOR_TOKENS.map((token) => escaped(token, form));
  if (form === 'text') return `(?:${SEPARATOR_CLASS}|${tokens.join('|')})*`;
  const ascii: string[] = [];
  const wide: string[] = [];
  for (const [from, to] of SEPARATOR_CODES)
    for (let code = from; code <= to; code++) (code < 0x80 ? ascii : wide).push(escaped(String.fromCodePoint(code), 'bytes'));
  return `(?:[${ascii.join('')}]|${[...wide, ...tokens].join('|')})*`;
}
const BETWEEN = { text: separatorRun('text'), bytes: separatorRun('bytes') };

const PATTERNS = { text: new Map<string, RegExp | null>(), bytes: new Map<string, RegExp | null>() };
const MAX_CACHED_PATTERNS = 1_000;

/**
 * The regex that finds `value` however a page reformats it: its characters but separators (SEPARATOR_CODES), in
 * order, with any run of separators between each two. Undefined when fewer than MIN_MASKED_LENGTH characters are left
 * (ordinary text would match). `text` matches strings; `bytes` the latin1 reading of UTF-8 bytes (a response body, a
 * trace line), where a separator may also be JSON-escaped. Each separator run is followed by a character that is no
 * separator, so a match costs time linear in its length.
 */
export function reformattedPattern(value: string, form: 'text' | 'bytes' = 'text'): RegExp | undefined {
  const cache = PATTERNS[form];
  let found = cache.get(value);
  if (found === undefined) {
    const core = [...value].filter((ch) => !IS_SEPARATOR.test(ch));
    found =
      core.length < MIN_MASKED_LENGTH
        ? null
        : new RegExp(core.map((ch) => escaped(ch, form)).join(BETWEEN[form]), form === 'text' ? 'gu' : 'g');
    if (cache.size >= MAX_CACHED_PATTERNS) cache.clear();
    cache.set(value, found);
  }
  return found ?? undefined;
}

/** `text` with every reformatted occurrence of `value` replaced by `label`. */
export function replaceReformatted(text: string, value: string, label: string): string {
  const pattern = reformattedPattern(value);
  if (!pattern) return text;
  pattern.lastIndex = 0;
  return pattern.test(text) ? text.replace(pattern, () => label) : text;
}
