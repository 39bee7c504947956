import { createRequire } from 'node:module';

type Counter = (text: string, options: { disallowedSpecial: Set<string> }) => number;
let counter: Counter | undefined;

/** A page that says "<|endoftext|>" says it as text: counted as such, never an error. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * The tokenizer's time grows with the square of a word's length (80,000 random letters: about 4 s), and it takes
 * 4-10 µs a character on text it has not seen (random letters, CJK) against 25 ns on prose; it runs on the server's
 * only thread (issue 40). A run of WORD_CHARS or more characters with no space (or of spaces) is one "word": it is
 * counted in slices of WORD_CHARS, its first WORD_SAMPLE_CHARS exactly and the rest at their rate. Other text is cut
 * only before a space that follows a non-space, where no o200k token spans the cut, so its count is exact.
 */
const WORD_CHARS = 256;
const WORD_SAMPLE_CHARS = 1_024;
/** Text counted by one call of the tokenizer, between two looks at the budget. */
const PIECE_CHARS = 2_048;
/** Most time one answer spends counting exactly (tokenCounter); what it asks after that is estimated. */
const ANSWER_COUNT_MS = 50;
/** Tokens a character before anything was counted (about what English prose costs). */
const DEFAULT_RATE = 0.25;

export type CountTokens = (text: string) => number;

/**
 * o200k tokens of `text`: exact for text of ordinary words; of a word longer than WORD_SAMPLE_CHARS, the rest is
 * estimated. For measuring; the server counts its answers with tokenCounter, whose time is bounded.
 */
export function countTokens(text: string): number {
  return count(text, new Tally(Infinity));
}

/**
 * A count for one answer of the server (a part of the page text, an act's change): as countTokens until `budgetMs`
 * of counting is spent, then an estimate at the rate counted so far, so that no page holds the thread longer.
 */
export function tokenCounter(budgetMs = ANSWER_COUNT_MS): CountTokens {
  const tally = new Tally(budgetMs);
  return (text) => count(text, tally);
}

/** The exact counting done for one answer. */
class Tally {
  ms = 0;
  tokens = 0;
  chars = 0;
  constructor(private readonly budgetMs: number) {}

  spent(): boolean {
    return this.ms >= this.budgetMs;
  }

  estimate(chars: number, rate = this.chars ? this.tokens / this.chars : DEFAULT_RATE): number {
    return Math.ceil(chars * rate);
  }

  /** The tokenizer's count; the tables cost about half a second of CPU to load, so they load at the first count. */
  exact(text: string): number {
    counter ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter }).countTokens;
    const started = performance.now();
    const tokens = counter(text, AS_TEXT);
    this.ms += performance.now() - started;
    this.tokens += tokens;
    this.chars += text.length;
    return tokens;
  }
}

function count(text: string, tally: Tally): number {
  let tokens = 0;
  for (let at = 0; at < text.length;) {
    if (tally.spent()) return tokens + tally.estimate(text.length - at);
    const long = nextWord(text, at, at + PIECE_CHARS);
    if (long?.start === at) {
      tokens += word(text.slice(at, long.end), tally);
      at = long.end;
      continue;
    }
    const end = long ? long.start : text.length - at <= PIECE_CHARS ? text.length : pieceEnd(text, at, at + PIECE_CHARS);
    tokens += tally.exact(text.slice(at, end));
    at = end;
  }
  return tokens;
}

/** The first run of WORD_CHARS or more spaces or non-spaces that starts in text[at, limit), to its end. */
function nextWord(text: string, at: number, limit: number): { start: number; end: number } | undefined {
  let start = at;
  let space = isSpace(text.charCodeAt(at));
  for (let i = at + 1; i <= text.length; i++) {
    const next = i < text.length && isSpace(text.charCodeAt(i));
    if (i < text.length && next === space) {
      if (i - start < WORD_CHARS) continue;
      // A long word: its end is found by the regex engine, many times faster than this loop.
      const end = space ? NON_SPACE : SPACE;
      end.lastIndex = i;
      return { start, end: end.exec(text)?.index ?? text.length };
    }
    if (i - start >= WORD_CHARS) return { start, end: i };
    if (i >= limit) return undefined;
    [start, space] = [i, next];
  }
  return undefined;
}

/** Where a piece from `at` ends, by `limit`: before a space that follows a non-space, where there is one. */
function pieceEnd(text: string, at: number, limit: number): number {
  for (let i = limit; i > at + PIECE_CHARS / 2; i--) if (text.charCodeAt(i) === 32 && !isSpace(text.charCodeAt(i - 1))) return i;
  return apart(text, limit);
}

/** A long word: its first WORD_SAMPLE_CHARS in slices of WORD_CHARS, the rest at their rate. */
function word(text: string, tally: Tally): number {
  let tokens = 0;
  let at = 0;
  while (at < text.length && at < WORD_SAMPLE_CHARS && !tally.spent()) {
    const end = apart(text, Math.min(at + WORD_CHARS, text.length));
    tokens += tally.exact(text.slice(at, end));
    at = end;
  }
  if (at >= text.length) return tokens;
  return tokens + (at ? tally.estimate(text.length - at, tokens / at) : tally.estimate(text.length));
}

/** `i`, or one before it where `i` would part a surrogate pair. */
function apart(text: string, i: number): number {
  const code = text.charCodeAt(i);
  return code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

const [SPACE, NON_SPACE] = [/\s/g, /\S/g];

/** JavaScript's `\s`, which the tokenizer's pattern uses: where a word ends. */
function isSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
