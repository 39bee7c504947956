import type { Walk } from './walk.js';

/** Elements that hold no page text of their own (a canvas is read apart, by its place on the screen). */
export const SKIP_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'meta',
  'link',
  'base',
  'wbr',
  'param',
  'source',
  'track',
  'datalist',
  'object',
  'embed',
  'canvas',
  'audio',
  'video',
  'map',
]);
/** Roles whose name comes from their content when nothing else names them. */
export const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'checkbox',
  'radio',
  'switch',
  'tab',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'option',
  'treeitem',
  'DisclosureTriangle',
  'tooltip',
  'heading',
  'cell',
  'columnheader',
  'rowheader',
]);
/** Roles the page text prints a name for besides the interactive ones (images, frames, containers): `Walk.named`. */
export const NAMED = [
  'image',
  'figure',
  'region',
  'form',
  'group',
  'radiogroup',
  'banner',
  'navigation',
  'main',
  'contentinfo',
  'complementary',
  'search',
  'dialog',
  'alertdialog',
  'Iframe',
];
/** Roles a `role` attribute may give besides the interactive ones: `Walk.ariaRoles`. */
export const ARIA_ROLES = [
  'alert',
  'alertdialog',
  'application',
  'article',
  'banner',
  'blockquote',
  'caption',
  'cell',
  'code',
  'columnheader',
  'complementary',
  'contentinfo',
  'definition',
  'deletion',
  'dialog',
  'directory',
  'document',
  'emphasis',
  'feed',
  'figure',
  'form',
  'generic',
  'grid',
  'gridcell',
  'group',
  'heading',
  'img',
  'image',
  'insertion',
  'list',
  'log',
  'main',
  'mark',
  'marquee',
  'math',
  'menu',
  'menubar',
  'meter',
  'navigation',
  'none',
  'note',
  'paragraph',
  'presentation',
  'progressbar',
  'radiogroup',
  'region',
  'row',
  'rowgroup',
  'rowheader',
  'search',
  'separator',
  'status',
  'strong',
  'subscript',
  'superscript',
  'table',
  'tablist',
  'tabpanel',
  'term',
  'time',
  'timer',
  'toolbar',
  'tooltip',
  'tree',
  'treegrid',
  'listitem',
];
const SECTIONING =
  'article, aside, main, nav, section, [role=article], [role=complementary], [role=main], [role=navigation], [role=region]';
export const PHRASING = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'font',
  'i',
  'kbd',
  'label',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'img',
  'button',
  'input',
  'select',
  'textarea',
]);
const INLINE_ROLES: Record<string, string> = {
  strong: 'strong',
  b: 'strong',
  em: 'emphasis',
  i: 'emphasis',
  code: 'code',
  mark: 'mark',
  sub: 'subscript',
  sup: 'superscript',
  time: 'time',
  abbr: 'abbr',
  del: 'deletion',
  ins: 'insertion',
  s: 'deletion',
};
/** Tags whose role is inline formatting (strong, emphasis, code, ...). */
export const INLINE_ROLE_TAGS: ReadonlySet<string> = new Set(Object.keys(INLINE_ROLES));
export function roleOf(walk: Walk, el: Element, tag: string): string {
  const explicit = (el.getAttribute('role') ?? '')
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .find((r) => walk.ariaRoles.has(r));
  if (explicit) return explicit === 'presentation' ? 'none' : explicit === 'img' ? 'image' : explicit;
  switch (tag) {
    case 'a':
    case 'area':
      // An anchor without href that handles clicks in its markup is a link to Chromium's tree too.
      return el.hasAttribute('href') || el.hasAttribute('onclick') ? 'link' : '';
    case 'button':
      return 'button';
    case 'input': {
      const type = (el as HTMLInputElement).type;
      if (type === 'hidden') return 'hidden';
      if (['button', 'submit', 'reset', 'image', 'file'].includes(type)) return 'button';
      if (type === 'checkbox') return 'checkbox';
      if (type === 'radio') return 'radio';
      if (type === 'range') return 'slider';
      if (type === 'number') return 'spinbutton';
      if (el.hasAttribute('list')) return 'combobox';
      if (type === 'search') return 'searchbox';
      return 'textbox';
    }
    case 'textarea':
      return 'textbox';
    case 'select': {
      const select = el as HTMLSelectElement;
      return select.multiple || select.size > 1 ? 'listbox' : 'combobox';
    }
    case 'option':
      return 'option';
    case 'optgroup':
      return 'group';
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
      return 'heading';
    case 'img':
      return el.getAttribute('alt') === '' && !el.hasAttribute('title') && !el.hasAttribute('aria-label') ? 'none' : 'image';
    case 'ul':
    case 'ol':
    case 'menu':
      return 'list';
    case 'li':
      return 'listitem';
    case 'table':
      return 'table';
    case 'caption':
      return 'caption';
    case 'thead':
    case 'tbody':
    case 'tfoot':
      return 'rowgroup';
    case 'tr':
      return 'row';
    case 'td':
      return 'cell';
    case 'th':
      return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    case 'nav':
      return 'navigation';
    case 'main':
      return 'main';
    case 'aside':
      return 'complementary';
    case 'header':
      return el.parentElement?.closest(SECTIONING) ? 'generic' : 'banner';
    case 'footer':
      return el.parentElement?.closest(SECTIONING) ? 'generic' : 'contentinfo';
    case 'section':
      return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : 'generic';
    case 'form':
      return 'form';
    case 'search':
      return 'search';
    case 'dialog':
      return 'dialog';
    case 'fieldset':
      return 'group';
    case 'details':
      return 'group';
    case 'summary':
      return 'DisclosureTriangle';
    case 'figure':
      return 'figure';
    case 'hr':
      return 'separator';
    case 'p':
      return 'paragraph';
    case 'blockquote':
      return 'blockquote';
    case 'article':
      return 'article';
    case 'progress':
      return 'progressbar';
    case 'meter':
      return 'meter';
    case 'output':
      return 'status';
    case 'iframe':
    case 'frame':
      return 'Iframe';
    case 'br':
      return 'LineBreak';
    case 'label':
      return 'LabelText';
    case 'dt':
      return 'term';
    case 'dd':
      return 'definition';
    default:
      return INLINE_ROLES[tag] ?? '';
  }
}
