import { randomBytes } from 'node:crypto';
import { tokenCounter, type CountTokens } from './tokens.js';
import { ServiceError } from './errors.js';
import { stateKey, type Session } from './sessions.js';

/**
 * Page text in parts of at most `maxTokens` o200k tokens (issue 22): a client that drops big results (Claude Code,
 * over 25,000 tokens) reads a long page in several calls. The whole text is read once and kept on the session; each
 * part is a slice of it, cut after a line break where one fits, so the parts concatenated are exactly the whole text.
 */

/** The page text of one read, kept for its continuation calls. */
interface PagedText {
  id: string;
  text: string;
}

/** Reads kept per session for their cursors: a newer paged read drops the oldest. */
const KEPT_READS = 4;
const PAGED = stateKey<PagedText[]>('extract.pagedText', () => []);

/** One part of the page text, and where the next begins. */
export interface PageTextPart {
  pageText: string;
  /** Pass as `cursor` to get the next part; absent on the last part. */
  nextCursor?: string;
  /** o200k tokens of the page text after this part; absent on the last part. */
  remainingTokens?: number;
}

/** The first part of `text` (or all of it when it fits); keeps the text on the session when more parts follow. */
export function firstPart(session: Session, text: string, maxTokens: number | undefined): PageTextPart {
  if (maxTokens === undefined) return { pageText: text };
  const count = tokenCounter();
  const end = cut(text, 0, maxTokens, count);
  if (end >= text.length) return { pageText: text };
  const kept = session.state.get(PAGED);
  const read: PagedText = { id: randomBytes(6).toString('base64url'), text };
  kept.push(read);
  if (kept.length > KEPT_READS) kept.shift();
  return part(read, 0, end, count);
}

/** The part a cursor of an earlier answer points at. */
export function nextPart(session: Session, cursor: string, maxTokens: number | undefined): PageTextPart {
  const match = /^([\w-]+)\.(\d+)$/.exec(cursor);
  const read = match ? session.state.get(PAGED).find((kept) => kept.id === match[1]) : undefined;
  const start = match ? Number(match[2]) : NaN;
  if (!read || !(start > 0 && start < read.text.length)) {
    throw new ServiceError(
      'invalid_argument',
      `cursor ${JSON.stringify(cursor)} is not a continuation of a recent page text of this session (only the ${KEPT_READS} latest long reads are kept); call extract without cursor to read the page again.`,
    );
  }
  const count = tokenCounter();
  return part(read, start, cut(read.text, start, maxTokens ?? Infinity, count), count);
}

function part(read: PagedText, start: number, end: number, count: CountTokens): PageTextPart {
  const pageText = read.text.slice(start, end);
  if (end >= read.text.length) return { pageText };
  return { pageText, nextCursor: `${read.id}.${end}`, remainingTokens: count(read.text.slice(end)) };
}

/**
 * Where a part starting at `start` ends: after the last whole line that keeps it within `maxTokens`; a first line
 * longer than that is cut inside (at a space where there is one).
 */
function cut(text: string, start: number, maxTokens: number, count: CountTokens): number {
  if (maxTokens === Infinity) return text.length;
  let end = start;
  let tokens = 0;
  while (end < text.length) {
    const newline = text.indexOf('\n', end);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    // A line's tokens and its break's: counted apart they are never fewer than counted together.
    const cost = count(text.slice(end, lineEnd));
    if (tokens + cost > maxTokens) break;
    tokens += cost;
    end = lineEnd;
  }
  if (end > start) return end;
  return cutLine(text, start, maxTokens, count);
}

/** The end of the longest prefix of the line at `start` within `maxTokens` (at least one character). */
function cutLine(text: string, start: number, maxTokens: number, count: CountTokens): number {
  const newline = text.indexOf('\n', start);
  let low = start + 1;
  let high = newline === -1 ? text.length : newline;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (count(text.slice(start, mid)) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  const space = text.lastIndexOf(' ', low);
  // Not inside a surrogate pair, and at a word boundary when one is in the latter half.
  let end = space > start + (low - start) / 2 ? space + 1 : low;
  if (end < text.length && /[\uDC00-\uDFFF]/.test(text[end]!) && end - 1 > start) end--;
  return end;
}
