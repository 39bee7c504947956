import { NAME_FROM_CONTENT, SKIP_TAGS } from './roles.js';
import { boxedInline, clean } from './text.js';
import type { WalkNode } from './types.js';
import { flatChildren, rootOf, type Walk } from './walk.js';

/**
 * Text of a node for a name: visible text, alt of images, values of embedded controls; without `skip` (an element, or
 * the elements a test picks).
 */
export function textOf(walk: Walk, node: Node, skip?: Element | ((el: Element) => boolean)): string {
  if (node.nodeType === Node.TEXT_NODE) return (node as Text).data;
  if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return '';
  if (node === skip || (typeof skip === 'function' && node.nodeType === Node.ELEMENT_NODE && skip(node as Element))) return '';
  let block = false;
  if (node.nodeType === Node.ELEMENT_NODE) {
    const el = node as Element;
    if (SKIP_TAGS.has(el.localName) || el.getAttribute('aria-hidden') === 'true') return '';
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return '';
    block = !style.display.startsWith('inline') || boxedInline(style);
    const tag = el.localName;
    if (tag === 'img' || tag === 'area') return ` ${el.getAttribute('alt') ?? ''} `;
    if (tag === 'input') {
      const input = el as HTMLInputElement;
      if (['checkbox', 'radio', 'hidden', 'file', 'image'].includes(input.type)) return '';
      return ` ${input.value} `;
    }
    if (tag === 'select') return ` ${(el as HTMLSelectElement).selectedOptions[0]?.label ?? ''} `;
    if (tag === 'textarea') return ` ${(el as HTMLTextAreaElement).value} `;
    const label = el.getAttribute('aria-label');
    if (label && label.trim()) return ` ${label} `;
    if (tag === 'br') return ' ';
  }
  const el = node as Element;
  const shadow = node.nodeType === Node.ELEMENT_NODE ? rootOf(walk, el) : null;
  let out = '';
  for (const kid of flatChildren(node, shadow)) out += textOf(walk, kid, skip);
  return block ? ` ${out} ` : out;
}

function byIds(walk: Walk, el: Element, attr: string): string {
  const ids = (el.getAttribute(attr) ?? '').split(/\s+/).filter(Boolean);
  if (!ids.length) return '';
  const root = el.getRootNode() as Document | ShadowRoot;
  return clean(
    ids
      .map((id) => {
        const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
        return target ? textOf(walk, target) : '';
      })
      .join(' '),
  );
}

function nativeName(walk: Walk, el: Element, tag: string, role: string): string {
  if (
    tag === 'input' ||
    tag === 'textarea' ||
    tag === 'select' ||
    tag === 'button' ||
    tag === 'meter' ||
    tag === 'progress' ||
    tag === 'output'
  ) {
    const input = el as HTMLInputElement;
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(input.type))
      return input.value || (input.type === 'submit' ? 'Submit' : input.type === 'reset' ? 'Reset' : '');
    if (tag === 'input' && input.type === 'image') return el.getAttribute('alt') ?? '';
    const labels = input.labels;
    if (labels && labels.length)
      return clean(
        Array.from(labels)
          .map((label) => textOf(walk, label, el))
          .join(' '),
      );
    return '';
  }
  if (tag === 'img' || tag === 'area') return el.getAttribute('alt') ?? '';
  if (tag === 'fieldset') {
    const legend = Array.from(el.children).find((kid) => kid.localName === 'legend');
    return legend ? clean(textOf(walk, legend)) : '';
  }
  if (tag === 'svg') {
    const title = Array.from(el.children).find((kid) => kid.localName === 'title');
    return title ? clean(title.textContent ?? '') : '';
  }
  if (tag === 'iframe' || tag === 'frame') return el.getAttribute('title') ?? '';
  if (tag === 'optgroup') return el.getAttribute('label') ?? '';
  if (role === 'option' && tag === 'option') return (el as HTMLOptionElement).label;
  return '';
}

export function nameOf(walk: Walk, el: Element, tag: string, role: string, content: () => string): string {
  const labelledBy = byIds(walk, el, 'aria-labelledby');
  if (labelledBy) return labelledBy;
  const label = clean(el.getAttribute('aria-label') ?? '');
  if (label) return label;
  const native = clean(nativeName(walk, el, tag, role));
  if (native) return native;
  if (NAME_FROM_CONTENT.has(role)) {
    const text = clean(content());
    if (text) return text;
  }
  const title = clean(el.getAttribute('title') ?? '');
  if (title) return title;
  return clean(el.getAttribute('placeholder') ?? el.getAttribute('aria-placeholder') ?? '');
}

/** The content text of nodes already read, for a name from content. */
export function readText(walk: Walk, nodes: Array<WalkNode | string>): string {
  let out = '';
  for (const node of nodes) {
    if (typeof node === 'string') out += node;
    else if (node.r === 'image' || walk.interactive.has(node.r)) out += ` ${node.n ?? ''} `;
    else if (node.h) out += ` ${node.h.text} `;
    else if (node.c) out += node.g ? readText(walk, node.c) : ` ${readText(walk, node.c)} `;
  }
  return out;
}
