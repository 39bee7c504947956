import type { Context, Walk } from './walk.js';

const HANDLER_ATTRIBUTES = ['onclick', 'ondblclick', 'oncontextmenu', 'onmousedown', 'onpointerdown'];
export const CONTROLS =
  'a[href], button, input, select, textarea, [contenteditable=""], [contenteditable=true], [role=button], [role=link], [role=textbox]';
export const CLASS_STATE = /^(?:is-)?(?:on|off|active|checked|selected|sel|current|open|enabled|expanded|collapsed)$/;
/** A menu, close or expand glyph and nothing else: `⋯`, `⋮`, `×`, `☰`, `▸`, `▾`. */
const GLYPH = /^(?:⋯|⋮|…|\.\.\.|×|✕|✖|✗|☰|≡|▸|▾|▶|▼|►|◂|◀|▴|▲|⏵|⏷|›|⌄)$/;

/**
 * Whether a person would click an element that has no control role: it handles clicks (a listener or a handler
 * attribute), shows the pointer cursor first (its children inherit it), can be dragged, is a <label> whose control
 * is not shown (a styled checkbox), or covers the viewport (a start screen, an overlay to dismiss).
 */
export function actsOnClick(walk: Walk, el: Element, tag: string, style: CSSStyleDeclaration, ctx: Context): boolean {
  if (tag === 'html' || tag === 'body') return false;
  // A listener on something that holds controls or frames is a root the page delegates to (React, Vue): its
  // controls, and what its frames hold, count.
  if (walk.listened.has(el) || HANDLER_ATTRIBUTES.some((attribute) => el.hasAttribute(attribute)))
    return !el.querySelector(`${CONTROLS}, iframe, frame`);
  // Something that can be dragged is a target of its own, inside a drop zone too (a card in a board's column).
  if (el.getAttribute('draggable') === 'true') return true;
  // Inside a control, a glyph of its own that shows the pointer (a row's "⋯" menu, a tab's "×", a tree node's "▸")
  // is a target too.
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
/** Longest text of one item of a menu or list of choices (`Antigua and Barbuda`): a longer one is content, not a choice. */
const MAX_ITEM_TEXT = 80;
/** Containers that hold choices when only two like items are in them (a list, a menu): others need three. */
const LIST_LIKE = 'ul, ol, [role=list], [role=listbox], [role=menu], [role=menubar], [role=tree]';

/**
 * Whether an element handles clicks for like items inside it, so that the items' words get refs of their own instead
 * of one ref holding them all. It is a target (a listener, a handler attribute, or the pointer cursor it shows first),
 * holds no button, link or anything draggable, and holds items of the same tag and class: three or more rows with
 * words in two or more cells (a data grid's body with one listener), or three (two in a list or menu) short choices
 * (a custom dropdown's options, an autocomplete's suggestions, a context menu's items). A card whose title and text
 * differ in class stays one target.
 */
export function delegatesClicks(walk: Walk, el: Element, pointer: boolean): boolean {
  if (!pointer && !walk.listened.has(el) && !HANDLER_ATTRIBUTES.some((attribute) => el.hasAttribute(attribute))) return false;
  // Rows with buttons or links of their own have their targets already; a field inside (a cell being edited) does
  // not end it, so the rows around it keep their refs while a cell is edited.
  if (el.localName === 'html' || el.localName === 'body' || el.querySelector(`${BUTTONS_AND_LINKS}, [draggable=true]`)) return false;
  if (el.getElementsByTagName('*').length > MAX_DELEGATED_ELEMENTS) return false;
  const needed = el.matches(LIST_LIKE) ? 2 : 3;
  const rows = new Map<string, number>();
  const choices = new Map<string, number>();
  for (const row of Array.from(el.children)) {
    const kind = `${row.localName}.${row.getAttribute('class') ?? ''}`;
    const cells = Array.from(row.children).filter((cell) => (cell.textContent ?? '').trim());
    if (cells.length >= 2) {
      const count = (rows.get(kind) ?? 0) + 1;
      if (count >= 3) return true;
      rows.set(kind, count);
    }
    const text = (row.textContent ?? '').trim();
    if (cells.length < 2 && text && text.length <= MAX_ITEM_TEXT && !row.querySelector(CONTROLS)) {
      const count = (choices.get(kind) ?? 0) + 1;
      if (count >= needed) return true;
      choices.set(kind, count);
    }
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
