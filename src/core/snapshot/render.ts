import type { PageNode } from './tree.js';

/** What an aria-hidden region shows, and whether it is a block of its own (not inline in the text around it). */
export interface HiddenText {
  text: string;
  block: boolean;
}

/** Roles a user acts on; each gets a ref. Focusable nodes of other roles get one too. */
export const INTERACTIVE = new Set([
  'button',
  'link',
  'textbox',
  'searchbox',
  'checkbox',
  'radio',
  'combobox',
  'listbox',
  'option',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'switch',
  'slider',
  'spinbutton',
  'treeitem',
  'DisclosureTriangle',
  'scrollbar',
]);
/** Containers worth a line of their own, with their content indented under them. */
const LANDMARKS = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'dialog', 'alertdialog']);
/** Inline formatting: its text joins the surrounding line. */
const INLINE = new Set([
  'StaticText',
  'strong',
  'emphasis',
  'code',
  'mark',
  'subscript',
  'superscript',
  'time',
  'abbr',
  'deletion',
  'insertion',
]);
/** Role names of the reader's own, said the way a reader knows them; a clickable element with no role says none. */
const DISPLAY_ROLE: Record<string, string> = { DisclosureTriangle: 'summary', LabelText: 'label', generic: '' };
/** Roles holding lines of their own: when one handles clicks (a sortable list), its ref heads its content. */
const CONTAINERS = new Set([
  'list',
  'table',
  'grid',
  'tree',
  'treegrid',
  'tablist',
  'menu',
  'menubar',
  'toolbar',
  'tabpanel',
  'feed',
  'article',
]);
/** Roles whose lines keep their shape when the element is clickable: the ref goes in front of the content. */
const MARKED = new Set(['heading', 'listitem', 'row', 'image', 'figure', 'paragraph', 'cell', 'gridcell', 'columnheader', 'rowheader']);
const CELLS = new Set(['cell', 'gridcell', 'columnheader', 'rowheader']);
/** Options of a native <select> listed on its line; a country list stops after this many. */
const MAX_OPTIONS = 30;
/** Longest stand-in text of a nameless link, in characters. */
const MAX_URL_LABEL = 40;

export interface RenderedRef {
  role: string;
  name: string;
  /** The element's id in its document (the reader's). */
  elementId: number;
  href?: string;
}

/** A place in the output where an iframe's content goes (filled in later, when iframes are read). */
export interface FrameSlot {
  /** The iframe element's id in its document. */
  elementId: number;
  depth: number;
  lines: Array<string | FrameSlot>;
}

/**
 * Short numbers for a document's elements: the same DOM node keeps its number across snapshots, and numbers stay small
 * (a 1-3 digit number is one o200k token, a backend node id is often two).
 */
export class RefNumbers {
  private readonly byElement = new Map<number, number>();
  /** What each number stands for now: its element, and whether that element has left the document. */
  private readonly holders = new Map<number, { elementId: number; gone: boolean }>();
  /** The numbers each key was given, for finding a replaced element's number; `common` past MAX_NUMBERS_PER_KEY. */
  private readonly byKey = new Map<string, number[] | 'common'>();
  private next = 1;

  constructor(
    /** The document these numbers belong to (the reader's token for it); a new document starts again at 1. */
    readonly document: string,
  ) {}

  /** Elements that have left the document (a whole read's `gone`): a replacement may take their numbers. */
  left(elementIds: Iterable<number>): void {
    for (const id of elementIds) {
      const n = this.byElement.get(id);
      if (n === undefined) continue;
      this.byElement.delete(id);
      this.holders.get(n)!.gone = true;
    }
  }

  /**
   * The element's number. A new element takes the number of the one gone element that had its key (what it is and
   * the words before it, refKey): a list drawn again from scratch keeps its refs, so a ref read before still works
   * and an action's diff shows only what changed. Where several gone elements had the key, none is guessed at.
   */
  of(elementId: number, keyOf?: () => string | undefined): number {
    let n = this.byElement.get(elementId);
    if (n !== undefined) return n;
    // Only a new element needs its key: a page read again mostly holds elements numbered before.
    const key = keyOf?.();
    n = (key === undefined ? undefined : this.successor(key)) ?? this.next++;
    if (key !== undefined) {
      const numbers = this.byKey.get(key);
      if (numbers === undefined) this.byKey.set(key, [n]);
      else if (numbers !== 'common' && !numbers.includes(n)) {
        if (numbers.length < MAX_NUMBERS_PER_KEY) numbers.push(n);
        else this.byKey.set(key, 'common');
      }
    }
    this.byElement.set(elementId, n);
    this.holders.set(n, { elementId, gone: false });
    return n;
  }

  private successor(key: string): number | undefined {
    const numbers = this.byKey.get(key);
    if (numbers === undefined || numbers === 'common') return undefined;
    const free = numbers.filter((n) => this.holders.get(n)!.gone);
    return free.length === 1 ? free[0] : undefined;
  }
}

/**
 * Most numbers one key keeps: a key given more often (a feed's hundredth "Reply") is too common to tell elements
 * apart by, and a bound keeps each new element's lookup short on a page that changes for hours.
 */
const MAX_NUMBERS_PER_KEY = 64;

/**
 * What a ref's element is, for passing its number on when it is replaced: its role, name and icon with the words just
 * before it (its row: each row's "Open" or `⋯` is told apart). Without those words it is matched by what it is alone.
 * Never by what it is alone when it has words before it: after a table's cell changed, the new "12" of one row would
 * take the number of another row's "12" that was redrawn too. None when it says too little.
 */
function refKey(role: string, name: string, icon: string | undefined, before: string): string | undefined {
  if (!name && !icon) return undefined;
  const what = `${role}\u0000${name}\u0000${icon ?? ''}`;
  const context = before.replace(/\[[\d-]+\] |\]\([\d-]+\)/g, '').slice(-80);
  return context ? `${what}\u0000${context}` : what;
}

/**
 * Renders one frame's tree (read.ts) as compact text lines; refs are `${refPrefix}${number}`, numbered by `numbers`
 * (`refPrefix` is `${frameId}-`, or empty for the main frame when no iframe's content is inlined).
 */
export class Renderer {
  readonly lines: Array<string | FrameSlot> = [];
  readonly refs = new Map<string, RenderedRef>();
  private line: string[] = [];
  private lineDepth = 0;
  /** Inside a table row, blocks and controls stay on the row's line. */
  private rowDepth = 0;
  /** The name of the container line just written: a legend or caption repeating it is dropped. */
  private header = '';
  private afterLink = false;
  /** Inside a clickable element whose words are on its own line: its controls follow without those words. */
  private controlsOnlyDepth = 0;
  /** A toggle's row words, said in its name, that the text after it may still repeat. */
  private skipWords = '';
  /** Role and name of toggles labelled alike on two or more rows (see labelsOnRows). */
  private sameOnEveryRow = new Set<string>();
  /**
   * Which pieces of the line are the page's own words, unescaped: each run of them is escaped as a whole when the line
   * is written (flush), so `<b>[1</b>2]` cannot write a ref (escaped), and a paragraph of 19,000 spans stays linear.
   */
  private readonly pageAt = new Set<number>();

  constructor(
    private readonly refPrefix: string,
    private readonly iframes: boolean,
    private readonly numbers: RefNumbers,
    /** On-screen text of aria-hidden regions, by element id: the tree has those regions without their text. */
    private readonly hiddenText: ReadonlyMap<number, HiddenText> = new Map(),
  ) {}

  render(root: PageNode, depth = 0): Array<string | FrameSlot> {
    this.sameOnEveryRow = labelsOnRows(root);
    this.node(root, depth, false);
    this.flush();
    return this.lines;
  }

  private node(node: PageNode, depth: number, mixed: boolean): void {
    const r = node.role;
    const hidden = node.ignored && node.elementId !== undefined ? this.hiddenText.get(node.elementId) : undefined;
    if (hidden !== undefined) return this.shownButHidden(hidden, depth);
    if (node.ignored) return this.kids(node, depth);
    if (r === 'StaticText') return this.text(node.name, depth);
    if (r === 'LineBreak') return this.flush();
    if (r === 'VisualRow') return this.visualRow(node, depth);
    if (r === 'Iframe') return this.iframe(node, depth);
    const shaped = node.props?.clickable === true && (MARKED.has(r) || CONTAINERS.has(r));
    if (this.isInteractive(node, r) && !shaped) return this.control(node, r, depth);
    if (r === 'heading') return this.block(node, depth, `${'#'.repeat(Number(node.props?.level ?? 2))} ${this.mark(node)}`);
    if (r === 'image' || (r === 'figure' && node.name)) return this.image(node, depth);
    if (r === 'listitem') return this.block(node, depth, `- ${this.mark(node)}`);
    if (r === 'row') return this.row(node, depth);
    if (CELLS.has(r)) {
      const mark = this.mark(node);
      if (mark) this.append(mark, depth);
      return this.kids(node, depth);
    }
    if (r === 'paragraph' && node.props?.clickable === true) return this.block(node, depth, this.mark(node));
    if (CONTAINERS.has(r) && node.props?.clickable === true) return this.container(node, r, depth);
    if (LANDMARKS.has(r) || ((r === 'region' || r === 'form' || r === 'group') && node.name)) {
      this.flush();
      if (this.rowDepth === 0) this.lines.push(`${indent(depth)}${r}:${node.name ? ` ${escaped(clean(node.name))}` : ''}`);
      this.header = escapedLine(escaped(clean(node.name)));
      this.kids(node, depth + 1);
      return this.flush();
    }
    if (INLINE.has(r) || (mixed && r === 'generic')) return this.kids(node, depth);
    this.block(node, depth, '');
  }

  private kids(node: PageNode, depth: number): void {
    const kids = node.children;
    const mixed = kids.some((kid) => kid.role === 'StaticText' && kid.name.trim() !== '');
    for (const kid of kids) this.node(kid, depth, mixed);
  }

  private block(node: PageNode, depth: number, prefix: string): void {
    this.flush();
    if (prefix) this.append(prefix, depth);
    this.kids(node, depth);
    this.flush();
  }

  private text(value: string, depth: number): void {
    if (this.skipWords) {
      const piece = clean(value);
      if (piece && this.skipWords.startsWith(piece)) return void (this.skipWords = this.skipWords.slice(piece.length).trim());
      if (piece) this.skipWords = '';
    }
    // A space between inline pieces (`<a>x</a> <a>y</a>`) keeps them apart; clean() drops it at a line's ends.
    if (!value.trim()) return void (this.line.length && !value.includes('\n') && this.line.push(' '));
    // Only preformatted text (<pre>, white-space: pre*) keeps a line break in its accessible text: code stays code.
    if (value.includes('\n') && this.rowDepth === 0) return this.preformatted(value, depth);
    // A word right after a link (`<a>US$</a>36,254`) gets a space, so the ref does not run into it: `[US$](9) 36,254`.
    const last = this.line[this.line.length - 1];
    if (last?.endsWith(')') && this.afterLink && /^[\p{L}\p{N}]/u.test(value)) value = ` ${value}`;
    this.afterLink = false;
    this.append(value, depth);
    this.pageAt.add(this.line.length - 1);
  }

  /** An aria-hidden region's rendered text: inline text joins the line around it, a block's lines stand alone. */
  private shownButHidden({ text, block }: HiddenText, depth: number): void {
    const lines = text.split('\n').map(clean).filter(Boolean);
    if (lines.length === 1 && !block) return this.text(lines[0]!, depth);
    this.flush();
    for (const line of lines) this.lines.push(indent(depth) + escapedLine(escaped(line)));
  }

  /** Each line of preformatted text on a line of its own, its own indentation kept; blank lines dropped. */
  private preformatted(value: string, depth: number): void {
    const [first = '', ...rest] = value.split('\n');
    if (first.trim()) this.append(escaped(first), depth);
    this.flush();
    for (const line of rest) {
      const kept = line.replace(/\s+$/, '');
      if (kept.trim()) this.lines.push(indent(depth) + escapedLine(escaped(kept)));
    }
  }

  /** The words just before what is rendered next: its line so far, else the line before. */
  private before(): string {
    // The line's end is enough (refKey keeps 80 characters): joining a long line for every ref on it would not be.
    let tail = '';
    for (let i = this.line.length - 1; i >= 0 && tail.length < 200; i--) tail = this.line[i] + tail;
    const line = clean(tail);
    if (line) return line;
    const last = this.lines[this.lines.length - 1];
    return typeof last === 'string' ? last.trim() : '';
  }

  private append(piece: string, depth: number): void {
    if (this.line.length === 0) this.lineDepth = depth;
    this.line.push(piece);
  }

  private flush(): void {
    if (this.rowDepth > 0) {
      this.line.push(' ');
      return;
    }
    const text = escapedLine(clean(this.written()));
    this.resetLine();
    if (!text || /^(#+|-)$/.test(text)) return;
    if (text === this.header) return void (this.header = '');
    this.header = '';
    const previous = this.lines.length - 1;
    const last = this.lines[previous];
    // Punctuation after a link joins the link's line instead of standing alone.
    if (/^[.,;:!?)\]}»”'"…]{1,3}$/.test(text) && typeof last === 'string') this.lines[previous] = last + text;
    else this.lines.push(indent(this.lineDepth) + text);
  }

  /** The line as it is written: the page's words escaped, run by run (see pageAt). */
  private written(): string {
    let out = '';
    let run = '';
    this.line.forEach((piece, i) => {
      if (this.pageAt.has(i)) return void (run += piece);
      if (run) out += escaped(run);
      run = '';
      out += piece;
    });
    return run ? out + escaped(run) : out;
  }

  private resetLine(): void {
    this.line = [];
    this.pageAt.clear();
  }

  private isInteractive(node: PageNode, r: string): boolean {
    if (INTERACTIVE.has(r)) return !(r === 'option' && this.inNativeSelect(node));
    return node.props?.focusable === true || node.props?.clickable === true;
  }

  /** A clickable container: `[ref] list` on a line, its content under it as usual. */
  private container(node: PageNode, r: string, depth: number): void {
    this.flush();
    this.lines.push(`${indent(depth)}${this.mark(node)}${r}${node.name ? `: ${escaped(clean(node.name))}` : ''}`);
    this.kids(node, depth + 1);
    this.flush();
  }

  /** `[ref] ` for a clickable element whose line keeps its own shape (a list item, a heading, a row); '' otherwise. */
  private mark(node: PageNode): string {
    if (node.props?.clickable !== true || node.elementId === undefined) return '';
    const name = clean(node.name) || clean(spacedText(node)).slice(0, 80);
    const ref = `${this.refPrefix}${this.numbers.of(node.elementId, () => refKey(node.role, name, undefined, this.before()))}`;
    this.refs.set(ref, { role: node.role, name, elementId: node.elementId });
    return `[${ref}] `;
  }

  /** An option of a native <select>: under its MenuListPopup, possibly through ignored wrappers. */
  private inNativeSelect(node: PageNode): boolean {
    for (let parent = node.parent; parent; parent = parent.parent) {
      if (parent.role === 'MenuListPopup') return true;
      if (!parent.ignored) return false;
    }
    return false;
  }

  /** `[ref] role: name = "value" (states)`; text before it on the same line stays, the element ends the line. */
  private control(node: PageNode, r: string, depth: number): void {
    this.skipWords = '';
    // A focusable element without a name (a div with tabindex) is labelled by its text; so is an element that only
    // handles clicks (an inbox row), whose controls inside then follow on lines of their own.
    const clickable = node.props?.clickable === true && !INTERACTIVE.has(r);
    const inside = this.hasInteractiveInside(node);
    // A clickable element holding controls (a board's column holding its cards) is named by its own words only.
    let label =
      clean(node.name) ||
      (!inside ? clean(spacedText(node)) : clickable ? clean(spacedText(node, (kid) => this.isInteractive(kid, kid.role))) : '');
    // A toggle labelled the same on every row (`Toggle Todo`) is named by its row's words.
    const row = stringProp(node, 'row');
    if (row && this.sameOnEveryRow.has(`${r}\u0000${label}`)) label = clean(row);
    // A name borrowed from the row: whole when it stands in for the lines just before (which go), else its first words.
    const borrowed = node.props?.borrowed === true ? label : '';
    let before = false;
    if (borrowed && !(before = this.line.length === 0 && this.dropRepeated(label))) label = firstWords(label);
    // Words that follow it in its row are not said twice: a toggle says them (`checkbox: walk dog`) and they go; another
    // control (an expander's icon) says none, and the row's words join its line instead.
    const follow =
      borrowed !== '' &&
      this.controlsOnlyDepth === 0 &&
      !before &&
      !says(clean(this.line.join('')), borrowed) &&
      says(wordsAfter(node, label.length + 200), label.replace(/…$/, ''));
    const joinRow = follow && !TOGGLES.has(r);
    this.skipWords = follow && !joinRow ? borrowed : '';
    const icon = stringProp(node, 'icon');
    const ref = `${this.refPrefix}${node.elementId === undefined ? 'x' : this.numbers.of(node.elementId, () => refKey(r, label, icon, this.before()))}`;
    const href = r === 'link' ? stringProp(node, 'url') : undefined;
    if (node.elementId !== undefined) this.refs.set(ref, { role: r, name: label, elementId: node.elementId, href });
    if (r === 'link' && !this.hasInteractiveInside(node)) return this.link(node, label, ref, href, depth);
    // A date or time field says which it is (`date`, `time`, `datetime-local`, `month`, `week`).
    const role = (r === 'textbox' && stringProp(node, 'type')) || (DISPLAY_ROLE[r] ?? r);
    let text = `[${ref}]${role ? ` ${role}` : ''}`;
    // A name borrowed from a row that is on this very line already (a grid row: `AH Chen Wei … [3] button (icon:
    // trash)`) is not said twice; the ref keeps it, for act's messages.
    const shown = joinRow || (borrowed && this.rowDepth > 0 && says(clean(this.line.join('')), borrowed)) ? '' : label;
    if (shown) text += role ? `: ${escaped(shown)}` : ` ${escaped(shown)}`;
    else if (href) text += `: ${escaped(urlLabel(href))}`;
    else if (!role && !icon) text += ' clickable';
    // An icon's hint, beside the words a nameless control borrowed from its row.
    const states = stateList(node);
    if (icon) text += ` (icon: ${escaped(icon)}${states ? `, ${states}` : ''})`;
    const value = node.value;
    const holds = value !== undefined && value !== '';
    if (holds && String(value) !== label && r !== 'link') text += ` = ${escaped(shownValue(r, String(value)))}`;
    // What it accepts (a slider's bounds, a date's format) follows its value, before its states.
    const after = [accepts(node, holds), icon ? '' : states].filter(Boolean).join(', ');
    if (after) text += ` (${after})`;
    const options = this.selectOptions(node);
    if (options) text += ` options: ${escaped(options)}`;
    if (clickable && inside) {
      this.flush();
      this.append(text, depth);
      // A glyph inside it (a tree node's `▸`) stays on its line: `[3] src [4] ▸`.
      if (!this.onlyGlyphsInside(node)) this.flush();
      return this.controlsOnly(node, depth + 1);
    }
    // A <label> rendered just before its control says the same as the control's name.
    if (shown && clean(this.line.join('')) === shown) this.resetLine();
    // So do the lines just before a control whose name it borrowed from them (a settings row's title and hint).
    if (label && !this.line.length) this.dropRepeated(label);
    this.append(this.line.length ? ` ${text}` : text, depth);
    const inner = clean(subtreeText(node));
    // A glyph inside a named control (`×` in "Delete Todo") says nothing more.
    const covered = !inner || says(label, inner) || says(String(value ?? ''), inner) || (label !== '' && GLYPHS.test(inner));
    // What only handles clicks inside a control that says all its words (a tab's anchor) is that control.
    if (!covered || this.hasInteractiveInside(node, false)) {
      this.flush();
      this.kids(node, depth + 1);
    } else if (joinRow) return;
    this.flush();
  }

  /** Links read as Markdown links inside the text, the ref standing where the URL would: `[Pricing](41)`. */
  private link(node: PageNode, label: string, ref: string, href: string | undefined, depth: number): void {
    const text = (label || (href ? urlLabel(href) : 'link')).replace(/[[\]]/g, '');
    const inner = clean(subtreeText(node));
    const space = this.line.length && !/\s$/.test(this.line[this.line.length - 1]!) ? ' ' : '';
    this.append(`${space}[${text}](${ref})${stateList(node) ? ` (${stateList(node)})` : ''}`, depth);
    this.afterLink = true;
    if (inner && !says(label, inner)) this.kids(node, depth);
  }

  /** The choices of a native <select>, which are in no other line (its options get no refs of their own). */
  private selectOptions(node: PageNode): string {
    const popup = node.children.find((kid) => kid.role === 'MenuListPopup');
    if (!popup) return '';
    const names: string[] = [];
    const collect = (container: PageNode) => {
      for (const kid of container.children) {
        if (kid.role === 'option') names.push(clean(kid.name));
        else if (kid.ignored || kid.role === 'group') collect(kid);
      }
    };
    collect(popup);
    const shown = names.slice(0, MAX_OPTIONS).join(' | ');
    return names.length > MAX_OPTIONS ? `${shown} | … (${names.length - MAX_OPTIONS} more)` : shown;
  }

  /** Drops the last one to three lines when together they say exactly `label`; whether it did. */
  private dropRepeated(label: string): boolean {
    let joined = '';
    for (let back = 1; back <= 3 && back <= this.lines.length; back++) {
      const line = this.lines[this.lines.length - back];
      if (typeof line !== 'string') return false;
      joined = joined ? `${line.trim()} ${joined}` : line.trim();
      if (joined === label) {
        this.lines.splice(this.lines.length - back, back);
        return true;
      }
      if (joined.length >= label.length) return false;
    }
    return false;
  }

  /** The controls under `node`, each on its line; its text is already on the line of the element holding them. */
  private controlsOnly(node: PageNode, depth: number): void {
    this.controlsOnlyDepth++;
    for (const kid of node.children) {
      if (!kid.ignored && kid.role !== 'StaticText' && this.isInteractive(kid, kid.role)) this.node(kid, depth, false);
      else this.controlsOnly(kid, depth);
    }
    this.controlsOnlyDepth--;
  }

  /** Whether the controls inside `node` are one glyph each (`▸`, `⋯`), with nothing inside them. */
  private onlyGlyphsInside(node: PageNode): boolean {
    return node.children.every((kid) => {
      if (kid.ignored || kid.role === 'StaticText' || !this.isInteractive(kid, kid.role)) return this.onlyGlyphsInside(kid);
      return !clean(kid.name) && GLYPHS.test(clean(spacedText(kid))) && !this.hasInteractiveInside(kid);
    });
  }

  /** Whether a control is inside `node`; `clickable`: counting elements that only handle clicks. */
  private hasInteractiveInside(node: PageNode, clickable = true): boolean {
    for (const kid of node.children) {
      const r = kid.role;
      if (!kid.ignored && r !== 'StaticText' && this.isInteractive(kid, r) && (clickable || kid.props?.clickable !== true)) return true;
      if (this.hasInteractiveInside(kid, clickable)) return true;
    }
    return false;
  }

  private image(node: PageNode, depth: number): void {
    const label = clean(node.name);
    const mark = this.mark(node);
    if (label || mark) this.append(`${this.line.length ? ' ' : ''}${mark}img${label ? `: ${escaped(label)}` : ''}`, depth);
    if (!label || !says(label, subtreeText(node))) this.kids(node, depth);
  }

  private row(node: PageNode, depth: number): void {
    this.flush();
    this.rowDepth++;
    const cells = node.children;
    this.append(`${this.mark(node)}|`, depth);
    for (const cell of cells) {
      this.line.push(' ');
      this.node(cell, depth, false);
      this.line.push(' |');
    }
    this.rowDepth--;
    this.flush();
  }

  /** Items a flex or grid box shows side by side (the reader's `VisualRow`): one line, controls included. */
  private visualRow(node: PageNode, depth: number): void {
    this.flush();
    this.rowDepth++;
    this.kids(node, depth);
    this.rowDepth--;
    this.flush();
  }

  private iframe(node: PageNode, depth: number): void {
    this.flush();
    const label = clean(node.name);
    // The frame element itself gets a ref too: it can be scrolled to, focused or clicked like any other element.
    let ref = '';
    if (node.elementId !== undefined) {
      ref = `${this.refPrefix}${this.numbers.of(node.elementId, () => refKey('iframe', label, undefined, this.before()))}`;
      this.refs.set(ref, { role: 'iframe', name: label, elementId: node.elementId });
    }
    const head = `${indent(depth)}${ref ? `[${ref}] ` : ''}iframe${label ? `: ${escaped(label)}` : ''}`;
    if (!this.iframes || node.elementId === undefined) {
      this.lines.push(`${head} (has content; read it with iframes: true)`);
      return;
    }
    this.lines.push(head);
    this.lines.push({ elementId: node.elementId, depth: depth + 1, lines: [] });
  }
}

/**
 * The text of a subtree with a space where a block starts or ends (`<div>Ann</div><div>Hi</div>` is "Ann Hi"), without
 * the subtrees `skip` names.
 */
function spacedText(node: PageNode, skip?: (kid: PageNode) => boolean): string {
  let out = '';
  for (const kid of node.children) {
    if (kid.role === 'StaticText') out += kid.name;
    else if (kid.role === 'MenuListPopup' || skip?.(kid)) continue;
    else if (INLINE.has(kid.role)) out += spacedText(kid, skip);
    else out += ` ${kid.name && kid.role !== 'generic' ? kid.name : spacedText(kid, skip)} `;
  }
  return out;
}

/** A control's content of one or two signs (`×`, `⋯`, `▾`), which its name says better. */
const GLYPHS = /^[^\p{L}\p{N}]{1,2}$/u;

/** Role and name of the toggles whose label (an attribute) is the same in two or more rows of words. */
function labelsOnRows(root: PageNode): Set<string> {
  const seen = new Map<string, number>();
  const walk = (node: PageNode) => {
    if (typeof node.props?.row === 'string') {
      const key = `${node.role}\u0000${clean(node.name)}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const kid of node.children) walk(kid);
  };
  walk(root);
  return new Set([...seen].filter(([, count]) => count >= 2).map(([key]) => key));
}

/**
 * The words after a node in its row (its list item, table row or tree item; at most four levels up), up to `enough`
 * characters: a list of 5,000 rows read whole for each row's control would be quadratic.
 */
function wordsAfter(node: PageNode, enough: number): string {
  let out = '';
  const add = (kid: PageNode): void => {
    if (out.length >= enough) return;
    if (kid.role === 'StaticText') out += kid.name;
    else if (kid.name && kid.role !== 'generic') out += ` ${kid.name} `;
    else {
      out += ' ';
      for (const inner of kid.children) add(inner);
      out += ' ';
    }
  };
  let at = node;
  for (let up = 0; at.parent && up < 4 && out.length < enough; up++) {
    const siblings = at.parent.children;
    for (let i = siblings.indexOf(at) + 1; i < siblings.length && out.length < enough; i++) add(siblings[i]!);
    if (ROW_ROLES.has(at.parent.role)) break;
    at = at.parent;
  }
  return out;
}
const ROW_ROLES = new Set(['listitem', 'row', 'treeitem', 'option']);
const TOGGLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

/** The first words of a name borrowed from a row: enough to tell rows apart, not the row again. */
function firstWords(words: string): string {
  return words.length <= 32 ? words : `${words.slice(0, 31).replace(/\s+\S*$/, '')}…`;
}

/** Concatenated text of a subtree, for telling whether a name already says it all. */
function subtreeText(node: PageNode): string {
  let out = '';
  for (const kid of node.children) out += kid.role === 'StaticText' ? kid.name : subtreeText(kid);
  return out;
}

/** A slider's number as it is (`= 10`); any other value, or a slider's aria-valuetext, quoted. */
function shownValue(role: string, value: string): string {
  return role === 'slider' && /^-?\d+(\.\d+)?$/.test(value) ? value : JSON.stringify(value);
}

/** What a field accepts: a slider's bounds (`-50..50`), a date or time field's format (`format yyyy-mm-dd`, bare when empty). */
function accepts(node: PageNode, holds: boolean): string {
  const { min, max } = node.props ?? {};
  if (typeof min === 'number' && typeof max === 'number') return `${min}..${max}`;
  const format = stringProp(node, 'format');
  return format ? (holds ? `format ${format}` : format) : '';
}

/** Roles a person types or steps into: only their line says it has the focus (a clicked button takes it too). */
const FIELDS = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);

/** Page text without its focus marks (stateList's `focused`), for telling what an action changed apart from the focus. */
export function withoutFocus(text: string): string {
  return text.replace(/ \(focused\)|, focused(?=\))/g, '');
}

function stateList(node: PageNode): string {
  const states: string[] = [];
  if (node.props?.vertical === true) states.push('vertical');
  const checked = node.props?.checked;
  if (checked === 'true' || checked === true) states.push('checked');
  else if (checked === 'mixed') states.push('mixed');
  const pressed = node.props?.pressed;
  if (pressed === 'true' || pressed === true) states.push('pressed');
  if (node.props?.selected === true && node.role !== 'option') states.push('selected');
  const stated = node.props?.state;
  if (typeof stated === 'string') states.push(stated);
  const expanded = node.props?.expanded;
  if (expanded !== undefined) states.push(expanded ? 'expanded' : 'collapsed');
  if (node.props?.disabled === true) states.push('disabled');
  if (node.props?.required === true) states.push('required');
  if (node.props?.readonly === true && node.role !== 'link') states.push('readonly');
  if (node.props?.focused === true && FIELDS.has(node.role)) states.push('focused');
  return states.join(', ');
}

function stringProp(node: PageNode, key: string): string | undefined {
  const value = node.props?.[key];
  return typeof value === 'string' && value ? value : undefined;
}

/**
 * A nameless link's stand-in text: the last segment of its path (`beatles-get-back.html`), or the host for a site's
 * root. The whole URL is long (query strings run to hundreds of tokens) and is in the ref's href anyway.
 */
function urlLabel(href: string): string {
  let label = href;
  try {
    const url = new URL(href);
    if (url.protocol.startsWith('http')) label = decodeURIComponent(url.pathname.split('/').filter(Boolean).pop() ?? '') || url.hostname;
  } catch {
    // Not a URL, or a malformed escape: the href as it is.
  }
  return label.length > MAX_URL_LABEL ? `${label.slice(0, MAX_URL_LABEL - 1)}…` : label;
}

/**
 * Whether a name already says all of a text: spacing aside, since a name puts spaces between the pieces its content
 * runs together (`<a><span>Home</span><img alt="logo"></a>` is named "Home logo", its text is "Home").
 */
function says(name: string, text: string): boolean {
  return name.replace(/\s+/g, '').includes(text.replace(/\s+/g, ''));
}

/**
 * What the page wrote, told apart from the reader's own syntax: a `[12]` or `](12)` in the page's words gets a backslash
 * (`\[12]`, `]\(12)`), so only the reader writes a ref a model can take; a ref never has a backslash before it. So does
 * a `<page>` or `</page>` (`<\/page>`), the tags extract and act's inference put around page text.
 */
export function escaped(text: string): string {
  return text.replace(SYNTAX_LIKE, (found) => (found === '[' ? '\\[' : found === '<' ? '<\\' : ']\\('));
}
const SYNTAX_LIKE = /\[(?=\d+(?:-\d+)?\])|\]\((?=\d+(?:-\d+)?\))|<(?=\/?page>)/gi;

/**
 * A line of the page's words that starts as the server's own lines do around page text (the agent's `URL:`, `Note:`,
 * `Page text:`, act's `Page:` and `Tabs:`, the operator's instructions) gets a backslash in front: `\Note: ...`.
 */
function escapedLine(line: string): string {
  return line.replace(HEADER_LIKE, '$1\\');
}
const HEADER_LIKE =
  /^(\s*)(?=(?:page state\b|\(page (?:state|text)\b|page text:|page:|new page:|url:|title:|note:|tabs:|task:|context:|meta:|variables available:|instructions from the operator\b))/i;

export function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function indent(depth: number): string {
  return ' '.repeat(depth);
}
