/**
 * Token savings on rendered page text that keep every word and every ref (issue 22, measured in docs/pagetext.md):
 * a navigation block repeated later on the page is folded into one line, lists whose items are each one link become
 * one line of links, and a run of lines repeated right after itself (responsive copies of a figure) is dropped.
 */

const REF = String.raw`\d+(?:-\d+)?`;
/** A list item that is exactly one link: `- [Tech](5)`. */
const LINK_ITEM = new RegExp(String.raw`^(\s*)- (\[[^\]\n]*\]\(${REF}\))$`);
const NAVIGATION = /^(\s*)navigation:(?: (.*))?$/;
const LINK = new RegExp(String.raw`\]\(${REF}\)`, 'g');
// A `\[12] ` is the page's own text (render.ts `escaped`), not a ref.
const CONTROL = new RegExp(String.raw`(?<!\\)\[${REF}\] `, 'g');
const HAS_REF = new RegExp(String.raw`\]\(${REF}\)|(?<!\\)\[${REF}\] `);
/** Longest run of lines checked for an immediate repeat; a single line (a table row, "Reply") is never one. */
const MAX_REPEAT = 6;
const MIN_REPEAT = 2;

export function compactLines(lines: string[]): string[] {
  return dropRepeats(joinLinkLists(foldNavigation(lines)));
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** The block's content without its refs and indentation: two copies of one menu read the same. */
function shape(lines: string[]): string {
  return lines.map((line) => line.trim().replace(LINK, '](#)').replace(CONTROL, '[#] ')).join('\n');
}

/**
 * A `navigation:` block whose content, refs aside, is that of an earlier one becomes one line saying so (its refs stay
 * valid; the earlier block's refs lead to the same places).
 */
function foldNavigation(lines: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const head = NAVIGATION.exec(line);
    if (!head) {
      out.push(line);
      continue;
    }
    const depth = head[1]!.length;
    let end = i + 1;
    while (end < lines.length && indentOf(lines[end]!) > depth) end++;
    const content = lines.slice(i + 1, end);
    const links = content.reduce((sum, l) => sum + (l.match(LINK)?.length ?? 0) + (l.match(CONTROL)?.length ?? 0), 0);
    const key = `${head[2] ?? ''}\n${shape(content)}`;
    if (links >= 2 && seen.has(key)) {
      out.push(`${line} (the same ${links} links as above)`);
      i = end - 1;
      continue;
    }
    seen.add(key);
    out.push(line);
  }
  return out;
}

/** Consecutive list items of one link each, at one depth, on one line: `[Tech](5) [Reviews](6)`. */
function joinLinkLists(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const first = LINK_ITEM.exec(lines[i]!);
    let j = i + 1;
    const links = first ? [first[2]!] : [];
    for (let next: RegExpExecArray | null; first && j < lines.length && (next = LINK_ITEM.exec(lines[j]!)) && next[1] === first[1]; j++)
      links.push(next[2]!);
    if (!first || links.length < 2) {
      out.push(lines[i]!);
      continue;
    }
    out.push(first[1]! + links.join(' '));
    i = j - 1;
  }
  return out;
}

/** A run of 2 to MAX_REPEAT lines without refs or table rows that repeats the run just before it is dropped. */
function dropRepeats(lines: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    let skipped = false;
    for (let k = Math.min(MAX_REPEAT, out.length, lines.length - i); k >= MIN_REPEAT && !skipped; k--) {
      const run = lines.slice(i, i + k);
      if (run.some((line) => HAS_REF.test(line) || line.trimStart().startsWith('|'))) continue;
      if (run.every((line, n) => line === out[out.length - k + n])) {
        i += k;
        skipped = true;
      }
    }
    if (!skipped) out.push(lines[i++]!);
  }
  return out;
}
