import { CONTROLS } from './clickable.js';
import { textOf } from './names.js';
import { clean } from './text.js';
import type { Walk } from './walk.js';

/** Icon class names: `fa-share`, `icon-trash`, `bi-x-lg`, `glyphicon-star`, `mdi-close`, `octicon-gear`. */
const ICON_CLASS = /^(?:fa[srlbdk]?|icon|bi|glyphicon|mdi|octicon|ti|lucide|feather|ri|la|codicon|material-icons)[-_](.+)$/;
const ICON_SKIP = /^(?:fw|lg|xs|sm|[0-9]+x|solid|regular|light|brands|outline|filled|spin|pulse|inverse|border|stack.*)$/;
/** A plain class word or id on an element with no words (`<span class="trash">`), unless it only says how it is laid out. */
const WORD_CLASS = /^[a-z][a-z-]{2,23}$/;
const LAYOUT_CLASS =
  /^(?:icon|icons|btn|button|link|item|items|wrap|wrapper|container|inner|outer|content|row|col|cell|box|block|flex|grid|left|right|top|bottom|center|active|selected|disabled|hidden|visible|show|open|closed|clickable|pointer|small|large|big|main|header|footer|body|title|label|text|image|img|ui-.*|js-.*|is-.*|has-.*)$/;

/** A short name for an element without words: a title, label or alt inside it, an <svg><title>, or an icon's class. */
export function iconOf(el: Element): string {
  const named = el.querySelector('[title], [aria-label], img[alt], svg title');
  if (named) {
    const said = clean(
      named.localName === 'title'
        ? (named.textContent ?? '')
        : (named.getAttribute('aria-label') ?? named.getAttribute('title') ?? named.getAttribute('alt') ?? ''),
    );
    if (said) return said.slice(0, 40);
  }
  for (const holder of [el, ...Array.from(el.querySelectorAll('i, span, svg, use'))].slice(0, 8)) {
    const href = holder.localName === 'use' ? (holder.getAttribute('href') ?? holder.getAttribute('xlink:href') ?? '') : '';
    if (href.includes('#')) return href.slice(href.indexOf('#') + 1).slice(0, 40);
    for (const name of Array.from(holder.classList)) {
      const icon = ICON_CLASS.exec(name)?.[1];
      if (icon && !ICON_SKIP.test(icon)) return icon.slice(0, 40);
    }
  }
  return '';
}

/** The last resort for a nameless control outside any row: a class word or id that says what it is (`trash`). */
export function classWord(el: Element): string {
  for (const name of [...Array.from(el.classList), el.id]) if (WORD_CLASS.test(name) && !LAYOUT_CLASS.test(name)) return name;
  return '';
}

/** What a row holds besides its words: other controls (a hover-only Delete), and rows nested in it (a tree's children). */
const NOT_ROW_WORDS = `${CONTROLS}, ul, ol, [role=group], [role=tree], [role=treeitem], [role=row], li, tr`;

/**
 * The words of the list item or table row a nameless control sits in (`[4] checkbox: buy milk`), without the other
 * controls and nested rows in it (unless only those hold words), or else of the nearest of its two closest containers
 * that has a few words besides it (a settings row: `Push notifications`).
 */
export function rowText(walk: Walk, el: Element): string {
  const row = el.parentElement?.closest('li, tr, [role=row], [role=listitem], [role=option], [role=treeitem]');
  if (row) {
    const own = clean(textOf(walk, row, (inside) => inside === el || (inside !== row && inside.matches(NOT_ROW_WORDS))));
    return (own || clean(textOf(walk, row, el))).slice(0, 120);
  }
  for (let box = el.parentElement, up = 0; box && up < 2 && box !== document.body; box = box.parentElement, up++) {
    // A container holding other controls is a form, not a row: its words (another field's value, a Submit) are not this one's.
    if (Array.from(box.querySelectorAll(CONTROLS)).some((other) => other !== el && !el.contains(other))) return '';
    const words = clean(textOf(walk, box, el));
    if (words) return words.length <= 120 ? words : '';
  }
  return '';
}
