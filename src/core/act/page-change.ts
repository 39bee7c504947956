import { countTokens } from '../tokens.js';
import type { LastRead } from '../snapshot/last-read.js';

/** Default budget for what an action changed on the page, o200k tokens. */
export const DEFAULT_CHANGE_TOKENS = 2_000;

export interface PageChange {
  pageChanged: boolean;
  navigated: boolean;
  diff?: { added: string[]; removed: string[] };
  pageText?: string;
  truncated?: string;
}

/**
 * What an action changed, from two whole-page reads: the lines added and removed within one document, or the new page's
 * text when the document changed (or there was no earlier read), cut to `maxTokens`.
 */
export function pageChange(before: LastRead | undefined, after: LastRead, urlBefore: string, maxTokens: number): PageChange {
  const navigated = before ? before.document !== after.document : after.url !== urlBefore;
  if (!before || navigated) {
    const { lines, cut } = within(after.text.split('\n'), maxTokens);
    return {
      pageChanged: navigated || after.url !== urlBefore,
      navigated,
      pageText: lines.join('\n'),
      ...(cut ? { truncated: `Cut to maxTokens ${maxTokens}: pageText ${cut} Read the whole page with extract.` } : {}),
    };
  }
  const { added, removed } = diffLines(before.text.split('\n'), after.text.split('\n'));
  const pageChanged = added.length > 0 || removed.length > 0 || after.url !== urlBefore;
  // New lines tell more than old ones: they get the budget first.
  const keptAdded = within(added, maxTokens);
  const keptRemoved = within(removed, maxTokens - keptAdded.tokens);
  const cuts = [keptAdded.cut && `added: ${keptAdded.cut}`, keptRemoved.cut && `removed: ${keptRemoved.cut}`].filter(Boolean);
  return {
    pageChanged,
    navigated: false,
    diff: { added: keptAdded.lines, removed: keptRemoved.lines },
    ...(cuts.length ? { truncated: `Cut to maxTokens ${maxTokens}: ${cuts.join(' ')} Read the whole page with extract.` } : {}),
  };
}

/** Most lines of a reordered run shown (before and after) when lines only moved. */
const MAX_MOVED_LINES = 40;

/**
 * Lines of `b` not in `a` and lines of `a` not in `b`, counted as multisets, each in page order; this stays linear on
 * pages of 50,000 lines. Lines that only changed places (a list sorted by a drag) are no change to a multiset: the run
 * from the first to the last line out of place is shown as removed in its old order and added in its new one.
 */
export function diffLines(a: string[], b: string[]): { added: string[]; removed: string[] } {
  const added = missingFrom(a, b);
  const removed = missingFrom(b, a);
  const [keptA, keptB] = [common(a, removed), common(b, added)];
  let first = 0;
  while (first < keptA.length && keptA[first] === keptB[first]) first++;
  if (first === keptA.length) return { added, removed };
  let last = keptA.length - 1;
  while (last > first && keptA[last] === keptB[last]) last--;
  const end = Math.min(last + 1, first + MAX_MOVED_LINES);
  return { added: [...added, ...keptB.slice(first, end)], removed: [...removed, ...keptA.slice(first, end)] };
}

/** The non-blank lines of `lines` without those in `gone` (as multisets), in order. */
function common(lines: string[], gone: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of gone) counts.set(line, (counts.get(line) ?? 0) + 1);
  return lines.filter((line) => {
    if (!line.trim()) return false;
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    return left === 0;
  });
}

function missingFrom(base: string[], lines: string[]): string[] {
  const counts = new Map<string, number>();
  for (const line of base) counts.set(line, (counts.get(line) ?? 0) + 1);
  const out: string[] = [];
  for (const line of lines) {
    const left = counts.get(line) ?? 0;
    if (left > 0) counts.set(line, left - 1);
    else if (line.trim()) out.push(line);
  }
  return out;
}

/** The first lines that fit in `budget` tokens (a newline counted as one), and a sentence saying what was cut. */
function within(lines: string[], budget: number): { lines: string[]; tokens: number; cut?: string } {
  let tokens = 0;
  let kept = 0;
  while (kept < lines.length) {
    const cost = countTokens(lines[kept]!) + 1;
    if (tokens + cost > budget) break;
    tokens += cost;
    kept++;
  }
  if (kept === lines.length) return { lines, tokens };
  const rest = lines.slice(kept).reduce((sum, line) => sum + countTokens(line) + 1, 0);
  return {
    lines: lines.slice(0, kept),
    tokens,
    cut: `${kept} of ${lines.length} lines shown, ${lines.length - kept} lines (${rest} tokens) left out.`,
  };
}
