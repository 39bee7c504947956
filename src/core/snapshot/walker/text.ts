export function collapse(text: string): string {
  return text.replace(/[ \t\n\r\f]+/g, ' ');
}

export function clean(text: string): string {
  return collapse(text).trim();
}

/**
 * An inline box with space around it (a tag chip: `display: inline-block` with padding or a margin): it reads as a word
 * of its own even where the markup puts no space beside it (`<span>Marketing</span><span>Urgent</span>`).
 */
export function boxedInline(style: CSSStyleDeclaration): boolean {
  if (!/^inline-(?:block|flex|grid|table)$/.test(style.display)) return false;
  const sides = [style.paddingLeft, style.paddingRight, style.marginLeft, style.marginRight, style.borderLeftWidth, style.borderRightWidth];
  return sides.some((side) => Number.parseFloat(side) > 0);
}

/**
 * A `<time>`'s datetime attribute when it says more than the words shown (`3 hours ago`, `Friday`, `03/04/2024`),
 * with zero seconds and fractions dropped (`2024-03-14T09:30Z`). Words that hold the value itself, or its year
 * beside a month's name (and the time of day when the value has one: `Jun 7, 2023, 8:54 PM`), need no repeating.
 */
export function datetimeOf(el: Element, words: string): string {
  const raw = clean(el.getAttribute('datetime') ?? '');
  const shown = clean(words);
  if (!raw || raw.length > 40 || !shown) return '';
  const short = raw.replace(/(T\d\d:\d\d)(?::00)?(?:\.\d+)?(?=Z|[+-]\d|$)/, '$1').replace(/(T\d\d:\d\d:\d\d)\.\d+/, '$1');
  if (shown.includes(raw) || shown.includes(short)) return '';
  const year = /^\d{4}/.exec(raw)?.[0];
  const spelled = year !== undefined && shown.includes(year) && /\p{L}{3}/u.test(shown);
  return spelled && (!/T\d/.test(raw) || /\d:\d\d/.test(shown)) ? '' : short;
}
