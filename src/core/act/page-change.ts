import { tokenCounter, type CountTokens } from '../tokens.js';
import type { LastRead } from '../snapshot/last-read.js';

/** Default budget for what an action changed on the page, o200k tokens. */
export const DEFAULT_CHANGE_TOKENS = 2_000;

export interface PageDiff {
  added: string[];
  removed: string[];
  /**
   * The change as a model reads it, in page order: `+ line`, `- line`, `- N lines (first … last)`, `  context`; left
   * out when it would be the removed lines then the added ones, as `- line` and `+ line`.
   */
  lines?: string[];
}

export interface PageChange {
  pageChanged: boolean;
  navigated: boolean;
  diff?: PageDiff;
  pageText?: string;
  truncated?: string;
}

/**
 * What an action changed, from two whole-page reads: within one document the lines added and removed and the unified
 * view of them (`diff.lines`), or the page text when that view would cost more to read than the page itself or the
 * diff gave up (a long page changed throughout); the new page's text when the document changed (or there was no
 * earlier read). Each is cut to `maxTokens`, counted with one tokenCounter (estimated past its time budget).
 */
export function pageChange(before: LastRead | undefined, after: LastRead, urlBefore: string, maxTokens: number): PageChange {
  const navigated = before ? before.document !== after.document : after.url !== urlBefore;
  const page = after.text.split('\n');
  const count = tokenCounter();
  if (!before || navigated) {
    const shown = within(page, maxTokens, count);
    return {
      pageChanged: navigated || after.url !== urlBefore,
      navigated,
      pageText: shown.lines.join('\n'),
      ...(shown.cut ? { truncated: cutNote(maxTokens, [`pageText ${shown.cut}`]) } : {}),
    };
  }
  const change = lineChange(before.text.split('\n'), page, count);
  const pageChanged = change.added.length > 0 || change.removed.length > 0 || after.url !== urlBefore;
  if (!change.added.length && !change.removed.length) return { pageChanged, navigated: false, diff: { added: [], removed: [] } };
  if (!change.exact || !costsNoMore(change.view, page, count)) {
    // A page mostly rewritten reads better whole, in its own order, than as what went and what came.
    const shown = within(page, maxTokens, count);
    const added = within(change.added, maxTokens, count);
    const removed = within(change.removed, maxTokens - added.tokens, count);
    const cuts = [shown.cut && `pageText ${shown.cut}`, added.cut && `added: ${added.cut}`, removed.cut && `removed: ${removed.cut}`];
    return {
      pageChanged,
      navigated: false,
      diff: { added: added.lines, removed: removed.lines },
      pageText: shown.lines.join('\n'),
      ...(cuts.some(Boolean) ? { truncated: cutNote(maxTokens, cuts) } : {}),
    };
  }
  // The view is cut at the budget in page order; the added and removed lines are those it kept.
  let tokens = 0;
  let kept = 0;
  let [addedKept, removedKept] = [0, 0];
  for (const line of change.view) {
    if (tokens + cost(line, count) > maxTokens) break;
    tokens += cost(line, count);
    addedKept += line.added;
    removedKept += line.removed;
    kept++;
  }
  // A collapsed run costs one line in the view but all of its lines here.
  const removed = within(change.removed.slice(0, removedKept), maxTokens, count);
  const cuts = [
    addedKept < change.added.length && `added: ${leftOut(change.added, addedKept, count)}`,
    removed.lines.length < change.removed.length && `removed: ${leftOut(change.removed, removed.lines.length, count)}`,
  ];
  const added = change.added.slice(0, addedKept);
  const lines = change.view.slice(0, kept).map((line) => line.text);
  // Lines that say no more than the removed lines and then the added ones are left out: that is how those read.
  const plain = [...removed.lines.map((line) => `- ${line}`), ...added.map((line) => `+ ${line}`)];
  const same = lines.length === plain.length && lines.every((line, i) => line === plain[i]);
  return {
    pageChanged,
    navigated: false,
    diff: { added, removed: removed.lines, ...(same ? {} : { lines }) },
    ...(cuts.some(Boolean) ? { truncated: cutNote(maxTokens, cuts) } : {}),
  };
}

/**
 * The lines `b` added to `a` and those it removed, each in page order, and the unified view of them (`lines`). An
 * order-preserving diff (Myers), bounded so that it stays fast on pages of 50,000 lines: the common head and tail are
 * trimmed first, and a middle that takes more than MAX_DIFF_WORK steps is answered as replaced whole, with no lines
 * (act answers the page text then).
 */
export function diffLines(a: string[], b: string[]): Required<PageDiff> {
  const { added, removed, view } = lineChange(a, b, tokenCounter());
  return { added, removed, lines: view.map((line) => line.text) };
}

/** Most steps (diagonals tried and lines matched) the line diff takes before it answers the middle as replaced whole. */
const MAX_DIFF_WORK = 1_000_000;
/** At most this many unchanged lines between two changes are shown between them, and the two read as one. */
const CONTEXT_GAP = 2;
/** A run of at least this many removed lines is said in one line, `- 13 lines (first … last)`, where that is shorter. */
const COLLAPSE_FROM = 4;
const SUMMARY_CHARS = 40;
const CONTEXT_CHARS = 100;

/** One line of the view, with its o200k cost once counted, and how many added and removed lines it says. */
interface ViewLine {
  text: string;
  tokens?: number;
  added: number;
  removed: number;
}

/** Lines a[a0, a1) replaced by b[b0, b1). */
interface Hunk {
  a0: number;
  a1: number;
  b0: number;
  b1: number;
}

/** The change of `a` to `b`; not `exact` when the diff gave up and the middle counts as replaced whole. */
function lineChange(
  a: string[],
  b: string[],
  count: CountTokens,
): { added: string[]; removed: string[]; view: ViewLine[]; exact: boolean } {
  const added: string[] = [];
  const removed: string[] = [];
  const view: ViewLine[] = [];
  const { hunks: all, exact } = lineHunks(a, b);
  if (!exact) {
    // No view: the page text is the answer.
    const [{ a0, a1, b0, b1 }] = all as [Hunk];
    return { added: filled(b.slice(b0, b1)), removed: filled(a.slice(a0, a1)), view, exact };
  }
  let shownTo = 0;
  for (const block of changeBlocks(a, b, all)) {
    let [hunks, lines] = [block, blockLines(a, b, block, count)];
    if (block.length > 1) {
      // A stretch rewritten (a shop's next page) reads better as its new lines in order than as many small changes.
      const whole = [{ a0: block[0]!.a0, a1: block.at(-1)!.a1, b0: block[0]!.b0, b1: block.at(-1)!.b1 }];
      const replaced = blockLines(a, b, whole, count);
      if (4 * costOf(replaced, count) <= 3 * costOf(lines, count)) [hunks, lines] = [whole, replaced];
    }
    const first = hunks[0]!;
    const opening = filled(a.slice(first.a0, first.a1))[0] ?? filled(b.slice(first.b0, first.b1))[0]!;
    // A bare value ("0.99", "$4.20") is read with the line that names it: the unchanged line above it.
    const label = bare(opening) ? lastFilled(b, shownTo, first.b0) : undefined;
    if (label !== undefined) view.push(viewLine(`  ${clip(b[label]!, CONTEXT_CHARS)}`));
    view.push(...lines);
    for (const hunk of hunks) {
      removed.push(...filled(a.slice(hunk.a0, hunk.a1)));
      added.push(...filled(b.slice(hunk.b0, hunk.b1)));
    }
    shownTo = block.at(-1)!.b1;
  }
  return { added, removed, view, exact };
}

/** A block's hunks as view lines: each one's removed lines (a long run in one line), its added ones, the unchanged lines between. */
function blockLines(a: string[], b: string[], block: Hunk[], count: CountTokens): ViewLine[] {
  const lines: ViewLine[] = [];
  block.forEach((hunk, i) => {
    const gone = filled(a.slice(hunk.a0, hunk.a1));
    const came = filled(b.slice(hunk.b0, hunk.b1));
    // A long run removed and a line or two added (a menu closing, a status changing): the last one removed stays
    // beside what replaced it.
    const run = came.length && came.length * 2 <= gone.length - 1 ? gone.slice(0, -1) : gone;
    const summary = run.length >= COLLAPSE_FROM ? collapsed(run) : undefined;
    if (summary && costsMore(run, count(summary) + 1, count)) {
      lines.push(viewLine(summary, { removed: run.length }));
      for (const line of gone.slice(run.length)) lines.push(viewLine(`- ${line}`, { removed: 1 }));
    } else for (const line of gone) lines.push(viewLine(`- ${line}`, { removed: 1 }));
    for (const line of came) lines.push(viewLine(`+ ${line}`, { added: 1 }));
    const next = block[i + 1];
    if (next) for (const line of filled(b.slice(hunk.b1, next.b0))) lines.push(viewLine(`  ${line}`));
  });
  return lines;
}

function viewLine(text: string, counts: { added?: number; removed?: number } = {}): ViewLine {
  return { text, added: counts.added ?? 0, removed: counts.removed ?? 0 };
}

/**
 * The changes in page order, those at most CONTEXT_GAP unchanged lines apart in one block. A block whose lines mostly
 * only changed places (a table sorted, a list reversed) is one hunk: all of its old lines removed, its new ones added
 * in their new order, rather than the few that happen to keep their order shown as unchanged between the rest.
 */
function changeBlocks(a: string[], b: string[], hunks: Hunk[]): Hunk[][] {
  const blocks: Hunk[][] = [];
  for (const hunk of hunks) {
    if (!filled(a.slice(hunk.a0, hunk.a1)).length && !filled(b.slice(hunk.b0, hunk.b1)).length) continue;
    const block = blocks.at(-1);
    if (block && filled(b.slice(block.at(-1)!.b1, hunk.b0)).length <= CONTEXT_GAP) block.push(hunk);
    else blocks.push([hunk]);
  }
  return blocks.map((block) => {
    const gone = block.flatMap((hunk) => filled(a.slice(hunk.a0, hunk.a1)));
    const came = block.flatMap((hunk) => filled(b.slice(hunk.b0, hunk.b1)));
    const moved = common(gone, came);
    if (moved < 2 || moved * 2 < Math.max(gone.length, came.length)) return block;
    return [{ a0: block[0]!.a0, a1: block.at(-1)!.a1, b0: block[0]!.b0, b1: block.at(-1)!.b1 }];
  });
}

/** The changed stretches of `a` to `b`, in order; one stretch, not `exact`, past MAX_DIFF_WORK. */
function lineHunks(a: string[], b: string[]): { hunks: Hunk[]; exact: boolean } {
  const ids = new Map<string, number>();
  const id = (line: string) => ids.get(line) ?? (ids.set(line, ids.size), ids.size - 1);
  const [x, y] = [Int32Array.from(a, id), Int32Array.from(b, id)];
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let [endA, endB] = [x.length, y.length];
  while (endA > head && endB > head && x[endA - 1] === y[endB - 1]) [endA, endB] = [endA - 1, endB - 1];
  if (head === endA && head === endB) return { hunks: [], exact: true };
  const whole = [{ a0: head, a1: endA, b0: head, b1: endB }];
  if (head === endA || head === endB) return { hunks: whole, exact: true };
  const script = editScript(x.subarray(head, endA), y.subarray(head, endB));
  if (!script) return { hunks: whole, exact: false };
  const hunks: Hunk[] = [];
  let [i, j] = [head, head];
  let open: Hunk | undefined;
  for (const op of script) {
    if (op === EQUAL) open = undefined;
    else if (!open) hunks.push((open = { a0: i, a1: i, b0: j, b1: j }));
    if (op !== ADDED) i++;
    if (op !== REMOVED) j++;
    if (open) [open.a1, open.b1] = [i, j];
  }
  return { hunks, exact: true };
}

const [EQUAL, REMOVED, ADDED] = [0, 1, 2];

/**
 * The shortest edit script of `a` to `b` (Myers, O((N+M)D)), one op per line, or undefined past MAX_DIFF_WORK steps.
 * `v[k]` is the furthest x reached on diagonal k = x - y; every step's `v` is kept to walk the path back.
 */
function editScript(a: Int32Array, b: Int32Array): Uint8Array | undefined {
  const [n, m] = [a.length, b.length];
  const o = n + m + 1;
  const v = new Int32Array(2 * o + 1).fill(-1);
  const trace: Int32Array[] = [];
  let work = 0;
  for (let d = 0; ; d++) {
    trace.push(v.slice(o - d, o + d + 1));
    for (let k = -d; k <= d; k += 2) {
      const from = d === 0 ? 0 : start(v, o, k, d, n, m);
      if (from < 0) {
        v[o + k] = -1;
        continue;
      }
      let x = from >> 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      work += x - (from >> 1);
      v[o + k] = x;
      if (x === n && y === m) return backtrack(trace, d, n, m);
    }
    work += d + 1;
    if (work > MAX_DIFF_WORK) return undefined;
  }
}

/**
 * Where the furthest path of `d` edits on diagonal `k` begins, as x * 2 + 1 when it came down from k + 1 (a line
 * added) or x * 2 when it came right from k - 1 (a line removed); -1 when neither stays inside the grid.
 */
function start(v: Int32Array, o: number, k: number, d: number, n: number, m: number): number {
  const down = k < d && v[o + k + 1]! >= 0 && v[o + k + 1]! - (k + 1) < m ? v[o + k + 1]! : -1;
  const right = k > -d && v[o + k - 1]! >= 0 && v[o + k - 1]! < n ? v[o + k - 1]! + 1 : -1;
  if (down < 0 && right < 0) return -1;
  return down >= right ? down * 2 + 1 : right * 2;
}

function backtrack(trace: Int32Array[], edits: number, n: number, m: number): Uint8Array {
  // Each line matched is one op for two lines, each edit one op for one.
  const ops = new Uint8Array((n + m + edits) / 2);
  let at = ops.length;
  let [x, y] = [n, m];
  for (let d = edits; d > 0; d--) {
    const k = x - y;
    const from = start(trace[d]!, d, k, d, n, m);
    const sx = from >> 1;
    for (; x > sx; x--, y--) ops[--at] = EQUAL;
    ops[--at] = from & 1 ? ADDED : REMOVED;
    [x, y] = from & 1 ? [sx, sx - k - 1] : [sx - 1, sx - k];
  }
  // What is left is the common start (ops is already zero there).
  return ops;
}

/** How many lines the two lists share, counted as multisets. */
function common(one: string[], other: string[]): number {
  const counts = new Map<string, number>();
  for (const line of one) counts.set(line, (counts.get(line) ?? 0) + 1);
  let shared = 0;
  for (const line of other) {
    const left = counts.get(line) ?? 0;
    if (left === 0) continue;
    counts.set(line, left - 1);
    shared++;
  }
  return shared;
}

/**
 * A line that does not say what it is: a short value of at most one word ("0.99", "$4.20", "10 / 10", "Shipped"), not
 * a "Total: 4.20", "2 items left", a heading, a table row or a control (whose line names it).
 */
function bare(line: string): boolean {
  const text = line.trim().replace(/^[-*+] /, '');
  return text.length <= 24 && !/[:=#|]|\[\d+\]/.test(text) && (text.match(/\p{L}{2,}/gu) ?? []).length <= 1;
}

/** A run of removed lines in one line: `- 13 lines (first … last)`. */
function collapsed(lines: string[]): string {
  return `- ${lines.length} lines (${clip(lines[0]!.trim(), SUMMARY_CHARS)} … ${clip(lines.at(-1)!.trim(), SUMMARY_CHARS)})`;
}

/** The index of the last non-blank line of lines[from, to), if any. */
function lastFilled(lines: string[], from: number, to: number): number | undefined {
  for (let i = to - 1; i >= from; i--) if (lines[i]!.trim()) return i;
  return undefined;
}

function filled(lines: string[]): string[] {
  return lines.filter((line) => line.trim());
}

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars - 1)}…` : text;
}

/**
 * Whether the view's words cost no more tokens than the page: its `+ ` and `- ` marks (about a token a line) are the
 * price of saying what changed, so a change about as long as the page is still answered as a change. Each is counted
 * only as far as it takes to tell (a long page and a short change are not counted whole).
 */
function costsNoMore(view: ViewLine[], page: string[], count: CountTokens): boolean {
  const [change, whole] = [
    tally(
      view.map((line) => line.text.slice(2)),
      count,
    ),
    tally(page, count),
  ];
  while (!change.done()) {
    if (change.tokens() <= whole.tokens()) change.more();
    else if (!whole.done()) whole.more();
    else return false;
  }
  while (whole.tokens() < change.tokens() && !whole.done()) whole.more();
  return change.tokens() <= whole.tokens();
}

/** Counts the tokens of `lines` as far as asked, a chunk at a time (each twice the last: one count of a joined chunk is cheaper than one a line). */
function tally(lines: string[], count: CountTokens): { tokens(): number; done(): boolean; more(): void } {
  let [at, size, tokens] = [0, 16, 0];
  return {
    tokens: () => tokens,
    done: () => at >= lines.length,
    more: () => {
      tokens += count(lines.slice(at, at + size).join('\n')) + 1;
      [at, size] = [at + size, size * 2];
    },
  };
}

/** A view line's o200k tokens, a newline counted as one; counted when first asked. */
function cost(line: ViewLine, count: CountTokens): number {
  return (line.tokens ??= count(line.text) + 1);
}

function costOf(lines: ViewLine[], count: CountTokens): number {
  return lines.reduce((sum, line) => sum + cost(line, count), 0);
}

/** Whether `lines` cost more than `tokens` (counted only as far as it takes to tell). */
function costsMore(lines: string[], tokens: number, count: CountTokens): boolean {
  let spent = 0;
  for (const line of lines) if ((spent += count(line) + 1) > tokens) return true;
  return false;
}

function cutNote(maxTokens: number, cuts: (string | false | undefined)[]): string {
  return `Cut to maxTokens ${maxTokens}: ${cuts.filter(Boolean).join(' ')} Read the whole page with extract.`;
}

function leftOut(lines: string[], kept: number, count: CountTokens): string {
  const rest = count(lines.slice(kept).join('\n')) + 1;
  return `${kept} of ${lines.length} lines shown, ${lines.length - kept} lines (${rest} tokens) left out.`;
}

/** The first lines that fit in `budget` tokens (a newline counted as one), and a sentence saying what was cut. */
function within(lines: string[], budget: number, count: CountTokens): { lines: string[]; tokens: number; cut?: string } {
  let tokens = 0;
  let kept = 0;
  while (kept < lines.length) {
    const cost = count(lines[kept]!) + 1;
    if (tokens + cost > budget) break;
    tokens += cost;
    kept++;
  }
  if (kept === lines.length) return { lines, tokens };
  return { lines: lines.slice(0, kept), tokens, cut: leftOut(lines, kept, count) };
}
