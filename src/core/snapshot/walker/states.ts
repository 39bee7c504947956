import { clean } from './text.js';
import type { WalkNode } from './types.js';

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
  return p;
}

export function valueOf(el: Element, tag: string, role: string): string | undefined {
  if (tag === 'input') {
    const input = el as HTMLInputElement;
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(input.type)) return undefined;
    return input.type === 'password' ? '•'.repeat(input.value.length) : input.value;
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
