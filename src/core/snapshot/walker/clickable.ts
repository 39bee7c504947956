import type { Context, Walk } from './walk.js';

const HANDLER_ATTRIBUTES = ['onclick', 'ondblclick', 'oncontextmenu', 'onmousedown', 'onpointerdown'];
export const CONTROLS =
  'a[href], button, input, select, textarea, [contenteditable=""], [contenteditable=true], [role=button], [role=link], [role=textbox]';
export const CLASS_STATE = /^(?:is-)?(?:on|off|active|checked|selected|sel|current|open|enabled|expanded|collapsed)$/;
/** A menu or close glyph and nothing else: `⋯`, `⋮`, `×`, `☰`. */
const GLYPH = /^(?:⋯|⋮|…|\.\.\.|×|✕|✖|✗|☰|≡)$/;

/**
 * Whether a person would click an element that has no control role: it handles clicks (a listener or a handler
 * attribute), shows the pointer cursor first (its children inherit it), can be dragged, is a <label> whose control
 * is not shown (a styled checkbox), or covers the viewport (a start screen, an overlay to dismiss).
 */
export function actsOnClick(walk: Walk, el: Element, tag: string, style: CSSStyleDeclaration, ctx: Context): boolean {
  if (tag === 'html' || tag === 'body') return false;
  // A listener on something that holds controls is a root the page delegates to (React, Vue): its controls count.
  if (walk.listened.has(el) || HANDLER_ATTRIBUTES.some((attribute) => el.hasAttribute(attribute))) return !el.querySelector(CONTROLS);
  // Something that can be dragged is a target of its own, inside a drop zone too (a card in a board's column).
  if (el.getAttribute('draggable') === 'true') return true;
  // Inside a control, a glyph of its own that shows the pointer (a row's "⋯" menu, a tab's "×") is a target too.
  if (ctx.control) return style.cursor === 'pointer' && GLYPH.test((el.textContent ?? '').trim());
  if (style.cursor === 'pointer' && !ctx.pointer) return true;
  // Under a container that handles clicks for its items, each piece of words a person sees is a target (a cell).
  if (ctx.delegated && hasOwnWords(el)) return true;
  if (tag === 'label') {
    const control = (el as HTMLLabelElement).control;
    return !control || !control.checkVisibility();
  }
  if (style.position === 'fixed' || style.position === 'absolute') {
    const box = el.getBoundingClientRect();
    return box.width * box.height >= 0.9 * innerWidth * innerHeight && !el.querySelector(CONTROLS);
  }
  return false;
}

const BUTTONS_AND_LINKS = 'a[href], button, [role=button], [role=link]';
/** Most elements under a container whose words all become targets; a bigger one keeps one ref for the whole. */
const MAX_DELEGATED_ELEMENTS = 1_500;

/**
 * Whether an element handles clicks for rows of like cells (a data grid's body with one listener): it holds no button,
 * link or anything draggable, and three or more of its children are rows of the same tag and class, each with
 * words in two or more cells. The cells' words then get refs of their own instead of one ref holding every row's
 * words. (A list of cards, each a target of its own, has no such rows.)
 */
export function delegatesClicks(walk: Walk, el: Element): boolean {
  if (!walk.listened.has(el) && !HANDLER_ATTRIBUTES.some((attribute) => el.hasAttribute(attribute))) return false;
  // Rows with buttons or links of their own have their targets already; a field inside (a cell being edited) does
  // not end it, so the rows around it keep their refs while a cell is edited.
  if (el.localName === 'html' || el.localName === 'body' || el.querySelector(`${BUTTONS_AND_LINKS}, [draggable=true]`)) return false;
  if (el.getElementsByTagName('*').length > MAX_DELEGATED_ELEMENTS) return false;
  const rows = new Map<string, number>();
  for (const row of Array.from(el.children)) {
    const cells = Array.from(row.children).filter((cell) => (cell.textContent ?? '').trim());
    if (cells.length < 2) continue;
    const kind = `${row.localName}.${row.getAttribute('class') ?? ''}`;
    const count = (rows.get(kind) ?? 0) + 1;
    if (count >= 3) return true;
    rows.set(kind, count);
  }
  return false;
}

/** Whether some words are the element's own (a text node of its own, not only its children's). */
function hasOwnWords(el: Element): boolean {
  return Array.from(el.childNodes).some((node) => node.nodeType === Node.TEXT_NODE && (node as Text).data.trim() !== '');
}

/** A label whose text names a rendered control, with no other control or link inside it. */
export function labelsItsControl(label: HTMLLabelElement): boolean {
  const control = label.control;
  if (!control || !control.checkVisibility()) return false;
  for (const inside of Array.from(label.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')))
    if (inside !== control) return false;
  return true;
}
