import { canvas } from './canvas.js';
import { actsOnClick, CLASS_STATE, delegatesClicks, labelsItsControl } from './clickable.js';
import { classWord, iconOf, rowText } from './icons.js';
import { nameOf, readText } from './names.js';
import { PHRASING, roleOf, SKIP_TAGS, INLINE_ROLE_TAGS } from './roles.js';
import { idOf } from './state.js';
import { nativelyFocusable, selectPopup, states, valueOf } from './states.js';
import { boxedInline, clean, collapse, datetimeOf } from './text.js';
import type { WalkNode } from './types.js';
import { flatChildren, rootOf, type Context, type Walk } from './walk.js';

const MATHML = 'http://www.w3.org/1998/Math/MathML';
/** Most elements inside a clickable one looked at (in document order) for a drawn box's state class. */
const MAX_STATE_BOXES = 30;
/** Longest text of one item a flex or grid line joins, and most items in such a box. */
const MAX_LINE_ITEM = 40;
const MAX_LINE_ITEMS = 400;
const HEADINGS = 'h1, h2, h3, h4, h5, h6, [role=heading]';
const TOGGLES = new Set(['checkbox', 'radio', 'switch']);

function visitChildren(walk: Walk, node: Node, shadow: ShadowRoot | null, ctx: Context, out: Array<WalkNode | string>): void {
  for (const kid of flatChildren(node, shadow)) visit(walk, kid, ctx, out);
}

/**
 * A flex or grid box of short items (a calendar's days, a toolbar, chips): the items that sit side by side on
 * screen are read as one line each (`VisualRow`), as a person reads them, instead of one line per item.
 */
function visitLines(walk: Walk, el: Element, shadow: ShadowRoot | null, ctx: Context, out: Array<WalkNode | string>): void {
  const kids = flatChildren(el, shadow);
  const elements = kids.filter((kid): kid is HTMLElement => kid.nodeType === Node.ELEMENT_NODE);
  // A box of thousands of items (a long list) is not measured item by item.
  if (elements.length < 3 || elements.length > MAX_LINE_ITEMS) return visitChildren(walk, el, shadow, ctx, out);
  const items = elements.filter((item) => item.getClientRects().length > 0);
  // A heading keeps its own line: it says where the page's parts begin.
  const short = (item: HTMLElement) => {
    // Far too much text at all is no (cheap); innerText, which lays the text out, only after.
    if ((item.textContent ?? '').length > MAX_LINE_ITEM * 8) return false;
    const text = item.innerText ?? '';
    return text.length <= MAX_LINE_ITEM && !text.includes('\n') && !item.matches(HEADINGS) && !item.querySelector(HEADINGS);
  };
  if (items.length < 3 || items.length > MAX_LINE_ITEMS || !items.every(short)) return visitChildren(walk, el, shadow, ctx, out);
  // Items share a line when each one's middle is within the height of the line's first item (items of
  // different heights, centred on one row, have different tops).
  const lineOf = new Map<Node, number>();
  let first: DOMRect | undefined;
  let lines = 0;
  for (const item of items) {
    const box = item.getBoundingClientRect();
    const middle = (box.top + box.bottom) / 2;
    const firstMiddle = first ? (first.top + first.bottom) / 2 : Number.NaN;
    const same =
      first !== undefined && middle >= first.top && middle <= first.bottom && firstMiddle >= box.top && firstMiddle <= box.bottom;
    if (!same) {
      first = box;
      lines++;
    }
    lineOf.set(item, lines);
  }
  // Every item on a line of its own (a column): nothing to join.
  if (lines === items.length) return visitChildren(walk, el, shadow, ctx, out);
  let row: Array<WalkNode | string> | undefined;
  let current = 0;
  for (const kid of kids) {
    const line = lineOf.get(kid);
    if (line !== undefined && line !== current) {
      row = [];
      out.push({ r: 'VisualRow', c: row });
      current = line;
    }
    visit(walk, kid, ctx, row ?? out);
  }
}

/** Reads a node of the flat tree into `out`: text, or an element with its role, name, states and content. */
export function visit(walk: Walk, node: Node, ctx: Context, out: Array<WalkNode | string>): void {
  if (node.nodeType === Node.TEXT_NODE) {
    if (!ctx.visible || ctx.mute) return;
    let data = (node as Text).data;
    // MathML trims its tokens' text and shows no whitespace between them (`<mi> a </mi><mo> ≠ </mo>` is a≠).
    if ((node.parentNode as Element | null)?.namespaceURI === MATHML) data = data.trim();
    if (!data) return;
    out.push(ctx.pre ? data : collapse(data));
    return;
  }
  if (node.nodeType !== Node.ELEMENT_NODE) return;
  const el = node as Element;
  const tag = el.localName;
  if (tag === 'canvas' && ctx.visible) return canvas(walk, el as HTMLCanvasElement, out);
  if (SKIP_TAGS.has(tag)) return;
  const style = getComputedStyle(el);
  const display = style.display;
  if (display === 'none') return;
  const visible = style.visibility === 'visible';
  const pre = /^pre|break-spaces/.test(style.whiteSpace) || /^(preserve|break-spaces)/.test(style.whiteSpaceCollapse ?? '');
  if (ctx.depth >= walk.options.maxDepth) {
    // Nesting this deep is no page's structure (the walk would run out of stack): its words, without the structure.
    const text = visible ? collapse((el as HTMLElement).innerText ?? el.textContent ?? '') : '';
    if (text.trim()) out.push({ r: 'generic', c: [text] });
    return;
  }
  const inner: Context = {
    visible,
    pre,
    flexParent: /flex|grid/.test(display),
    mute: ctx.mute || (tag === 'label' && labelsItsControl(el as HTMLLabelElement)),
    depth: ctx.depth + 1,
    pointer: style.cursor === 'pointer',
    control: ctx.control,
    delegated: ctx.delegated,
  };
  const shadow = rootOf(walk, el);
  if (el.getAttribute('aria-hidden') === 'true') {
    if (walk.hiddenLeft > 0 && visible && el.children.length > 0 && (el as HTMLElement).innerText !== undefined) {
      const text = (el as HTMLElement).innerText ?? '';
      if (text.trim()) {
        walk.hiddenLeft--;
        out.push({ r: 'generic', g: 1, h: { text, block: !display.startsWith('inline') } });
      }
    }
    return;
  }
  if (display === 'contents' || !visible) {
    visitChildren(walk, el, shadow, inner, out);
    return;
  }
  let role = roleOf(walk, el, tag);
  if (role === 'hidden') return;
  if (role === 'generic' || !role) {
    // An editing host is a text field to whoever types in it.
    if ((el as HTMLElement).isContentEditable && !(el.parentElement as HTMLElement | null)?.isContentEditable) role = 'textbox';
  }
  const focusable = Number.parseInt(el.getAttribute('tabindex') ?? '', 10) >= 0 || nativelyFocusable(el, tag);
  // MathML's parts (`display: math`) flow in their formula's line.
  const inline = display.startsWith('inline') || display === 'math' || (ctx.flexParent && PHRASING.has(tag));
  if (tag === 'svg') {
    // A drawing: its name, never its text (glyphs, <desc>), whatever its role.
    const name = nameOf(walk, el, tag, 'image', () => '');
    if (name) out.push({ r: 'image', n: name });
    return;
  }
  if (role === 'Iframe') {
    const frame: WalkNode = { r: 'Iframe', i: idOf(walk.state, el), n: clean(nameOf(walk, el, tag, role, () => '')) };
    const stamp = el.getAttribute(walk.options.frameAttribute);
    if (stamp !== null) frame.f = stamp;
    out.push(frame);
    return;
  }
  // A list of like items handled by one listener on their container: the items' words are the targets, not the whole.
  const delegating = !ctx.control && !ctx.delegated && delegatesClicks(walk, el, style.cursor === 'pointer' && !ctx.pointer);
  if (delegating) inner.delegated = true;
  const clickable = !walk.interactive.has(role) && !focusable && !delegating && actsOnClick(walk, el, tag, style, ctx);
  // Inside a control only a handler of its own makes an element another thing to act on (not the cursor it inherits).
  if (walk.interactive.has(role) || focusable || clickable) inner.control = true;
  if (!role || role === 'none' || role === 'generic') {
    if (focusable || clickable) role = 'generic';
    // role=none takes the semantics away, not the layout: a block stays a block.
    else if (!inline) {
      const c: Array<WalkNode | string> = [];
      if (inner.flexParent) visitLines(walk, el, shadow, inner, c);
      else visitChildren(walk, el, shadow, inner, c);
      if (c.length) out.push({ r: 'generic', c });
      return;
    } else {
      // A flex or grid item is a box of its own, shown on its container's line: its words stay apart (`docs AM`).
      const boxed = (ctx.flexParent && !display.startsWith('inline')) || boxedInline(style);
      if (boxed) out.push(' ');
      visitChildren(walk, el, shadow, inner, out);
      if (boxed) out.push(' ');
      return;
    }
  }
  const c: Array<WalkNode | string> = [];
  if (tag === 'details' && !(el as HTMLDetailsElement).open) {
    // A closed <details> shows its summary only (the rest is hidden by content-visibility, not display).
    const summary = Array.from(el.children).find((kid) => kid.localName === 'summary');
    if (summary) visit(walk, summary, inner, c);
  } else if (tag === 'select') {
    if (role === 'combobox') c.push(selectPopup(el as HTMLSelectElement));
    else visitChildren(walk, el, shadow, inner, c);
  } else if (tag !== 'input' && tag !== 'textarea' && tag !== 'img' && role !== 'image') visitChildren(walk, el, shadow, inner, c);
  // A time's machine-readable value follows its words (`March 14, 2024 (2024-03-14)`), unless it names a control.
  if (tag === 'time' && !inner.control && walk.timesLeft > 0) {
    const stamp = datetimeOf(el, readText(walk, c));
    if (stamp) {
      walk.timesLeft--;
      c.push(` (${stamp})`);
    }
  }
  const result: WalkNode = { r: role };
  const actionable = walk.interactive.has(role) || focusable || clickable;
  if (walk.named.has(role) || focusable || clickable) {
    const name = nameOf(walk, el, tag, role, () => readText(walk, c));
    if (name) result.n = name;
  }
  const value = valueOf(el, tag, role);
  if (value !== undefined && value !== '') result.v = value;
  const p = states(el, tag, role, focusable);
  if (clickable) {
    p.clickable = true;
    // A custom widget says its state in a class only (`switch on`, `tab active`), its own or that of a box without
    // words inside it (a row whose drawn checkbox is `cb on`).
    // The box's state is told with the box's class word (`star on`), so a row does not read as on itself.
    const stateOf = (of: Element) =>
      Array.from(of.classList)
        .find((name) => CLASS_STATE.test(name))
        ?.replace(/^is-/, '')
        .replace(/^sel$/, 'selected');
    let stated = stateOf(el);
    // The first elements inside only, and only small ones (a box holds an icon at most): the walk stays cheap
    // inside a clickable card that wraps half the page.
    const inside = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT);
    for (
      let box = inside.nextNode() as Element | null, seen = 0;
      box && !stated && seen < MAX_STATE_BOXES;
      box = inside.nextNode() as Element | null, seen++
    ) {
      if (box.childElementCount > 3 || !box.classList.length || (box.textContent ?? '').trim()) continue;
      const state = stateOf(box);
      if (state) stated = `${classWord(box) || 'box'} ${state}`;
    }
    if (stated) p.state = stated;
  }
  if (actionable && !result.n && !readText(walk, c).trim()) {
    // A control with no words of its own borrows some: its icon's, or else the row it sits in.
    const icon = iconOf(el);
    // A link without words reads as its URL's last segment instead (the renderer's). The row names an icon's row too.
    const row = role === 'link' ? '' : rowText(walk, el);
    // A native field's class (`toggle`) says nothing its role does not.
    const word = icon || tag === 'input' ? '' : classWord(el);
    if (icon || word) p.icon = icon || word;
    if (row) {
      result.n = row;
      p.borrowed = true;
    }
  }
  // A checkbox labelled by an attribute (`aria-label="Toggle Todo"`) in a row of words: the row's words go with it, and
  // the renderer names it by them when the label is the same on every row.
  if (
    result.n &&
    TOGGLES.has(role) &&
    (result.n === clean(el.getAttribute('aria-label') ?? '') || result.n === clean(el.getAttribute('title') ?? ''))
  ) {
    const row = rowText(walk, el);
    if (row && !row.includes(result.n)) p.row = row;
  }
  for (const _ in p) {
    result.p = p;
    break;
  }
  if (actionable) result.i = idOf(walk.state, el);
  if (tag === 'input' && (el as HTMLInputElement).type === 'password') result.pw = 1;
  if (c.length) result.c = c;
  // Formatting shown as a block (`<b style="display: block">` under a label's text) keeps its words apart.
  const boxed = (!inline || boxedInline(style)) && INLINE_ROLE_TAGS.has(tag);
  if (boxed) out.push(' ');
  out.push(result);
  if (boxed) out.push(' ');
}
