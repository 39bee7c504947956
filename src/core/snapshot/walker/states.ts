import { clean } from './text.js';
import { INPUT_FORMATS, type WalkNode } from './types.js';

export function nativelyFocusable(el: Element, tag: string): boolean {
  if ((el as HTMLElement).isContentEditable && !(el.parentElement as HTMLElement | null)?.isContentEditable) return true;
  if (tag === 'a' || tag === 'area') return el.hasAttribute('href');
  if (tag === 'input') return (el as HTMLInputElement).type !== 'hidden' && !(el as HTMLInputElement).disabled;
  if (tag === 'button' || tag === 'select' || tag === 'textarea') return !(el as HTMLButtonElement).disabled;
  return tag === 'summary' || tag === 'iframe';
}

function ariaBool(el: Element, attr: string): boolean | 'mixed' | undefined {
  const value = el.getAttribute(attr);
  if (value === null || value === '' || value === 'undefined') return undefined;
  if (value === 'mixed') return 'mixed';
  return value === 'true';
}

export function states(el: Element, tag: string, role: string, focusable: boolean): Record<string, string | number | boolean> {
  const p: Record<string, string | number | boolean> = {};
  if (focusable) p.focusable = true;
  if (role === 'heading') {
    const level = Number(el.getAttribute('aria-level')) || (/^h[1-6]$/.test(tag) ? Number(tag[1]) : 2);
    p.level = level;
  }
  if (role === 'link') p.url = (el as HTMLAnchorElement).href ?? '';
  const input = el as HTMLInputElement;
  if (tag === 'input' && (input.type === 'checkbox' || input.type === 'radio'))
    p.checked = input.indeterminate ? 'mixed' : input.checked ? 'true' : 'false';
  else {
    const checked = ariaBool(el, 'aria-checked');
    if (checked !== undefined) p.checked = checked === 'mixed' ? 'mixed' : String(checked);
  }
  const pressed = ariaBool(el, 'aria-pressed');
  if (pressed !== undefined) p.pressed = pressed === 'mixed' ? 'mixed' : String(pressed);
  if (ariaBool(el, 'aria-selected') === true || (tag === 'option' && (el as HTMLOptionElement).selected)) p.selected = true;
  const expanded = ariaBool(el, 'aria-expanded');
  if (expanded !== undefined) p.expanded = expanded === true;
  else if (role === 'combobox' && tag === 'select') p.expanded = false;
  else if (tag === 'summary' && el.parentElement?.localName === 'details') p.expanded = (el.parentElement as HTMLDetailsElement).open;
  if (
    ariaBool(el, 'aria-disabled') === true ||
    ((tag === 'input' ||
      tag === 'button' ||
      tag === 'select' ||
      tag === 'textarea' ||
      tag === 'fieldset' ||
      tag === 'option' ||
      tag === 'optgroup') &&
      el.matches(':disabled'))
  )
    p.disabled = true;
  if (
    ariaBool(el, 'aria-required') === true ||
    ((tag === 'input' || tag === 'select' || tag === 'textarea') && (el as HTMLInputElement).required)
  )
    p.required = true;
  if (
    ariaBool(el, 'aria-readonly') === true ||
    ((tag === 'input' || tag === 'textarea') &&
      (el as HTMLInputElement).readOnly &&
      role !== 'checkbox' &&
      role !== 'radio' &&
      role !== 'button')
  )
    p.readonly = true;
  if (role === 'slider') slider(el, tag, p);
  if (tag === 'input' && input.type === 'password' && input.value) p.state = 'filled';
  if (tag === 'input' && INPUT_FORMATS[input.type]) {
    p.type = input.type;
    p.format = formatOf(input);
  }
  if (focusable && hasFocus(el)) p.focused = true;
  return p;
}

/** A number attribute, or `fallback` when it is absent or no number. */
function numberOr(value: string | null, fallback: number): number {
  return value !== null && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : fallback;
}

/**
 * A slider's bounds (a range input's, 0 and 100 by default; a drawn slider's aria-valuemin and aria-valuemax when it
 * gives both) and whether it runs up and down: aria-orientation, or a range input laid out vertically (a vertical
 * writing mode, the old `appearance: slider-vertical`, or a box taller than wide).
 */
function slider(el: Element, tag: string, p: Record<string, string | number | boolean>): void {
  const range = tag === 'input' && (el as HTMLInputElement).type === 'range';
  if (range) {
    const min = numberOr(el.getAttribute('min'), 0);
    p.min = min;
    p.max = Math.max(min, numberOr(el.getAttribute('max'), 100));
  } else {
    const min = numberOr(el.getAttribute('aria-valuemin'), Number.NaN);
    const max = numberOr(el.getAttribute('aria-valuemax'), Number.NaN);
    if (!Number.isNaN(min) && !Number.isNaN(max)) {
      p.min = min;
      p.max = max;
    }
  }
  let vertical = el.getAttribute('aria-orientation') === 'vertical';
  if (!vertical && range) {
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    vertical = /^(vertical|sideways)/.test(style.writingMode) || style.appearance === 'slider-vertical' || box.height > box.width;
  }
  if (vertical) p.vertical = true;
}

/** The format a date or time input takes: its type's, with seconds when its step is not whole minutes. */
function formatOf(input: HTMLInputElement): string {
  const format = INPUT_FORMATS[input.type]!;
  const step = numberOr(input.getAttribute('step'), 60);
  return (input.type === 'time' || input.type === 'datetime-local') && step % 60 !== 0 ? `${format}:ss` : format;
}

/**
 * Whether the element has the focus: the active element of its document (or shadow root), in a document that has the
 * focus (a frame keeps its active element after the focus left it). A shadow host whose focus is inside says nothing:
 * the element inside does.
 */
function hasFocus(el: Element): boolean {
  if ((el.getRootNode() as Document | ShadowRoot).activeElement !== el) return false;
  return !el.shadowRoot?.activeElement && el.ownerDocument.hasFocus();
}

export function valueOf(el: Element, tag: string, role: string): string | undefined {
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(input.type)) return undefined;
    // A password field says only that it is filled (states): one dot a character would tell its length.
    return input.type === 'password' ? undefined : input.value;
  }
  if (tag === 'textarea') return (el as HTMLTextAreaElement).value;
  if (tag === 'select' && role === 'combobox') return (el as HTMLSelectElement).selectedOptions[0]?.label ?? '';
  if (tag === 'progress' || tag === 'meter') return String((el as HTMLProgressElement).value);
  if (['slider', 'spinbutton', 'progressbar', 'scrollbar', 'meter'].includes(role))
    return el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow') ?? undefined;
  if ((el as HTMLElement).isContentEditable) return (el as HTMLElement).innerText;
  return undefined;
}

/** A native <select>'s choices, as Chromium's tree holds them: a popup with its options (and groups). */
export function selectPopup(select: HTMLSelectElement): WalkNode {
  const c: WalkNode[] = [];
  for (const kid of Array.from(select.children)) {
    if (kid.localName === 'option') c.push({ r: 'option', n: clean((kid as HTMLOptionElement).label) });
    else if (kid.localName === 'optgroup')
      c.push({
        r: 'group',
        n: kid.getAttribute('label') ?? '',
        c: Array.from(kid.children)
          .filter((o) => o.localName === 'option')
          .map((o) => ({ r: 'option', n: clean((o as HTMLOptionElement).label) })),
      });
  }
  return { r: 'MenuListPopup', c };
}
