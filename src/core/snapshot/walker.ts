/**
 * The page text's reader, run inside the page (Playwright's utility world of each frame, out of the page's reach): it
 * walks the DOM once, the flat tree (open shadow roots, slots, and closed roots handed in by the caller) in document
 * order, and answers a small tree of what the page text shows: roles, names, values and states, text, and a stable id
 * on every element that may get a ref. Chromium's own accessibility tree (CDP getFullAXTree) answered the same in one
 * reply of about 800 bytes an element, built and serialised by the renderer and parsed on the server's one thread;
 * this reply is a few bytes a word and is built by a DOM walk like Playwright's own ariaSnapshot.
 *
 * `walkPage` is sent to the page as source text (`WALKER_SOURCE`), so it must stand alone: no imports, no closures over
 * this module, no classes (a bundler's helpers would not exist in the page).
 */

/** One node of the reader's answer: a string is text; `g` marks a node that adds nothing of its own (its content does). */
export interface WalkNode {
  /** Role, as the renderer reads it (ARIA roles, and `StaticText`-free names for HTML's own: `Iframe`, `MenuListPopup`). */
  r: string;
  n?: string;
  v?: string;
  /** The element's id in this document, for refs and iframe slots. */
  i?: number;
  /** States and properties: level, url, focusable, checked, pressed, selected, expanded, disabled, required, readonly. */
  p?: Record<string, string | number | boolean>;
  c?: Array<WalkNode | string>;
  /** Ignored: transparent, its content is read in its place. */
  g?: 1;
  /** On-screen text of an aria-hidden region, and whether it is a block. */
  h?: { text: string; block: boolean };
  /** An iframe's `data-bsm-frame` stamp: the session's id for the frame it holds. */
  f?: string;
  /** A password input: its value is never in the text. */
  pw?: 1;
}

export interface WalkOptions {
  /** XPath of the part to read (the whole document when absent). */
  xpath?: string;
  /** Refuse to read more elements than this. */
  maxElements: number;
  /** Most aria-hidden regions whose on-screen text is read. */
  maxHidden: number;
  /** Most `<time datetime>` values shown after their time's text. */
  maxTimes: number;
  /** Deepest element read as structure; deeper ones give their text alone. */
  maxDepth: number;
  /** Attribute naming an iframe's frame id (stamped by the server when iframes are read). */
  frameAttribute: string;
  /** Roles a user acts on (the renderer's): their elements get ids for refs. */
  interactiveRoles: string[];
  /** How many of the objects handed in after the options are closed shadow roots; the rest are elements with a
   * click, dblclick, mousedown, pointerdown, keydown or drop listener (found by the server over CDP). */
  closedRoots: number;
}

export type WalkResult =
  | { ok: true; doc: string; title: string; root: WalkNode; gone: number[] }
  | { ok: false; error: 'too_large'; elements: number; scoped: boolean }
  | { ok: false; error: 'not_found' }
  | { ok: false; error: 'invalid_xpath'; message: string };

/** Registry key (Symbol.for) of the reader's per-document state in its world: document token, element ids, latest refs. */
export const WALKER_STATE_KEY = 'bsm.pagetext';

export function walkPage(options: WalkOptions, ...handed: Array<ShadowRoot | Element>): string {
  const KEY = Symbol.for('bsm.pagetext');
  type State = { doc: string; ids: WeakMap<Element, number>; next: number; nodes: Map<number, WeakRef<Element>> };
  const win = window as unknown as Record<symbol, State | undefined>;
  const state: State = (win[KEY] ??= {
    doc: `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`,
    ids: new WeakMap(),
    next: 1,
    nodes: new Map(),
  });
  // A whole read forgets elements that have left (and says which, so their refs can pass to their replacements); a
  // narrow read (xpath) adds to what the last reads found.
  const gone: number[] = [];
  if (options.xpath === undefined)
    for (const [id, ref] of state.nodes)
      if (!ref.deref()?.isConnected) {
        state.nodes.delete(id);
        gone.push(id);
      }

  const closed = new Map<Element, ShadowRoot>();
  for (const root of handed.slice(0, options.closedRoots) as ShadowRoot[]) if (root && root.host) closed.set(root.host, root);
  const listened = new Set<Element>(handed.slice(options.closedRoots) as Element[]);

  const rootOf = (el: Element): ShadowRoot | null => el.shadowRoot ?? closed.get(el) ?? null;

  const countIn = (start: Element | Document | ShadowRoot): number => {
    let total = 0;
    const visit = (root: Element | Document | ShadowRoot) => {
      const all = root.querySelectorAll('*');
      total += all.length + (root.nodeType === 1 ? 1 : 0);
      for (const el of all) {
        const shadow = rootOf(el);
        if (shadow) visit(shadow);
        if (el.localName === 'iframe' || el.localName === 'frame') {
          // contentDocument is null for a cross-origin frame: its elements are counted when it is read on its own.
          const doc = (el as HTMLIFrameElement).contentDocument;
          if (doc) visit(doc);
        }
      }
    };
    visit(start);
    return total;
  };

  let start: Element | null = document.documentElement;
  if (options.xpath !== undefined) {
    let found: Node | null;
    try {
      found = document.evaluate(options.xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
    } catch (err) {
      return JSON.stringify({ ok: false, error: 'invalid_xpath', message: String((err as Error)?.message ?? err).split('\n')[0] });
    }
    if (found && found.nodeType === Node.DOCUMENT_NODE) found = (found as Document).documentElement;
    start = found && found.nodeType !== Node.ELEMENT_NODE ? found.parentElement : (found as Element | null);
    if (!start) return JSON.stringify({ ok: false, error: 'not_found' });
  }
  if (!start) return JSON.stringify({ ok: true, doc: state.doc, title: document.title, root: { r: 'RootWebArea', c: [] }, gone });
  const elements = countIn(options.xpath === undefined ? document : start);
  if (elements > options.maxElements)
    return JSON.stringify({ ok: false, error: 'too_large', elements, scoped: options.xpath !== undefined });

  const SKIP_TAGS = new Set([
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
  const INTERACTIVE = new Set(options.interactiveRoles);
  /** Roles whose name comes from their content when nothing else names them. */
  const NAME_FROM_CONTENT = new Set([
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
  /** Roles the page text prints a name for (controls, images, frames, containers); others are read through their content. */
  const NAMED = new Set([
    ...INTERACTIVE,
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
  ]);
  const ARIA_ROLES = new Set([
    ...INTERACTIVE,
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
  ]);
  const SECTIONING =
    'article, aside, main, nav, section, [role=article], [role=complementary], [role=main], [role=navigation], [role=region]';
  const PHRASING = new Set([
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
  const MATHML = 'http://www.w3.org/1998/Math/MathML';
  /** Longest text of one item a flex or grid line joins, and most items in such a box. */
  const MAX_LINE_ITEM = 40;
  const MAX_LINE_ITEMS = 400;
  const HEADINGS = 'h1, h2, h3, h4, h5, h6, [role=heading]';
  let hiddenLeft = options.maxHidden;
  let timesLeft = options.maxTimes;

  const collapse = (text: string) => text.replace(/[ \t\n\r\f]+/g, ' ');
  const clean = (text: string) => collapse(text).trim();

  const idOf = (el: Element): number => {
    let id = state.ids.get(el);
    if (id === undefined) state.ids.set(el, (id = state.next++));
    state.nodes.set(id, new WeakRef(el));
    return id;
  };

  /** Text of a node for a name: visible text, alt of images, values of embedded controls. */
  const textOf = (node: Node, skip?: Element): string => {
    if (node.nodeType === Node.TEXT_NODE) return (node as Text).data;
    if (node.nodeType !== Node.ELEMENT_NODE && node.nodeType !== Node.DOCUMENT_FRAGMENT_NODE) return '';
    if (node === skip) return '';
    let block = false;
    if (node.nodeType === Node.ELEMENT_NODE) {
      const el = node as Element;
      if (SKIP_TAGS.has(el.localName) || el.getAttribute('aria-hidden') === 'true') return '';
      const style = getComputedStyle(el);
      if (style.display === 'none' || style.visibility === 'hidden') return '';
      block = !style.display.startsWith('inline');
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
    const shadow = node.nodeType === Node.ELEMENT_NODE ? rootOf(el) : null;
    let out = '';
    for (const kid of flatChildren(node, shadow)) out += textOf(kid, skip);
    return block ? ` ${out} ` : out;
  };

  /** The children of a node in the flat tree: its shadow root's content, a slot's assigned nodes, or its own children. */
  const flatChildren = (node: Node, shadow: ShadowRoot | null): Node[] => {
    if (shadow) return Array.from(shadow.childNodes);
    if ((node as Element).localName === 'slot') {
      const assigned = (node as HTMLSlotElement).assignedNodes();
      if (assigned.length) return assigned;
    }
    return Array.from(node.childNodes);
  };

  const byIds = (el: Element, attr: string): string => {
    const ids = (el.getAttribute(attr) ?? '').split(/\s+/).filter(Boolean);
    if (!ids.length) return '';
    const root = el.getRootNode() as Document | ShadowRoot;
    return clean(
      ids
        .map((id) => {
          const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
          return target ? textOf(target) : '';
        })
        .join(' '),
    );
  };

  const roleOf = (el: Element, tag: string): string => {
    const explicit = (el.getAttribute('role') ?? '')
      .trim()
      .toLowerCase()
      .split(/\s+/)
      .find((r) => ARIA_ROLES.has(r));
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
  };

  const nativeName = (el: Element, tag: string, role: string): string => {
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
            .map((label) => textOf(label, el))
            .join(' '),
        );
      return '';
    }
    if (tag === 'img' || tag === 'area') return el.getAttribute('alt') ?? '';
    if (tag === 'fieldset') {
      const legend = Array.from(el.children).find((kid) => kid.localName === 'legend');
      return legend ? clean(textOf(legend)) : '';
    }
    if (tag === 'svg') {
      const title = Array.from(el.children).find((kid) => kid.localName === 'title');
      return title ? clean(title.textContent ?? '') : '';
    }
    if (tag === 'iframe' || tag === 'frame') return el.getAttribute('title') ?? '';
    if (tag === 'optgroup') return el.getAttribute('label') ?? '';
    if (role === 'option' && tag === 'option') return (el as HTMLOptionElement).label;
    return '';
  };

  const nameOf = (el: Element, tag: string, role: string, content: () => string): string => {
    const labelledBy = byIds(el, 'aria-labelledby');
    if (labelledBy) return labelledBy;
    const label = clean(el.getAttribute('aria-label') ?? '');
    if (label) return label;
    const native = clean(nativeName(el, tag, role));
    if (native) return native;
    if (NAME_FROM_CONTENT.has(role)) {
      const text = clean(content());
      if (text) return text;
    }
    const title = clean(el.getAttribute('title') ?? '');
    if (title) return title;
    return clean(el.getAttribute('placeholder') ?? el.getAttribute('aria-placeholder') ?? '');
  };

  const nativelyFocusable = (el: Element, tag: string): boolean => {
    if ((el as HTMLElement).isContentEditable && !(el.parentElement as HTMLElement | null)?.isContentEditable) return true;
    if (tag === 'a' || tag === 'area') return el.hasAttribute('href');
    if (tag === 'input') return (el as HTMLInputElement).type !== 'hidden' && !(el as HTMLInputElement).disabled;
    if (tag === 'button' || tag === 'select' || tag === 'textarea') return !(el as HTMLButtonElement).disabled;
    return tag === 'summary' || tag === 'iframe';
  };

  const ariaBool = (el: Element, attr: string): boolean | 'mixed' | undefined => {
    const value = el.getAttribute(attr);
    if (value === null || value === '' || value === 'undefined') return undefined;
    if (value === 'mixed') return 'mixed';
    return value === 'true';
  };

  const states = (el: Element, tag: string, role: string, focusable: boolean): Record<string, string | number | boolean> => {
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
  };

  const valueOf = (el: Element, tag: string, role: string): string | undefined => {
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
  };

  /** A native <select>'s choices, as Chromium's tree holds them: a popup with its options (and groups). */
  const selectPopup = (select: HTMLSelectElement): WalkNode => {
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
  };

  /**
   * A `<time>`'s datetime attribute when it says more than the words shown (`3 hours ago`, `Friday`, `03/04/2024`),
   * with zero seconds and fractions dropped (`2024-03-14T09:30Z`). Words that hold the value itself, or its year
   * beside a month's name (and the time of day when the value has one: `Jun 7, 2023, 8:54 PM`), need no repeating.
   */
  const datetimeOf = (el: Element, words: string): string => {
    const raw = clean(el.getAttribute('datetime') ?? '');
    const shown = clean(words);
    if (!raw || raw.length > 40 || !shown) return '';
    const short = raw.replace(/(T\d\d:\d\d)(?::00)?(?:\.\d+)?(?=Z|[+-]\d|$)/, '$1').replace(/(T\d\d:\d\d:\d\d)\.\d+/, '$1');
    if (shown.includes(raw) || shown.includes(short)) return '';
    const year = /^\d{4}/.exec(raw)?.[0];
    const spelled = year !== undefined && shown.includes(year) && /\p{L}{3}/u.test(shown);
    return spelled && (!/T\d/.test(raw) || /\d:\d\d/.test(shown)) ? '' : short;
  };

  /** The content text of nodes already read, for a name from content. */
  const readText = (nodes: Array<WalkNode | string>): string => {
    let out = '';
    for (const node of nodes) {
      if (typeof node === 'string') out += node;
      else if (node.r === 'image' || INTERACTIVE.has(node.r)) out += ` ${node.n ?? ''} `;
      else if (node.h) out += ` ${node.h.text} `;
      else if (node.c) out += node.g ? readText(node.c) : ` ${readText(node.c)} `;
    }
    return out;
  };

  /** `mute`: inside a <label> whose text is its control's name (Chromium leaves that text out of its tree too). */
  /** `pointer`: the parent shows a pointer cursor (its children inherit it: only the outermost gets a ref). */
  type Context = { visible: boolean; pre: boolean; flexParent: boolean; mute: boolean; depth: number; pointer: boolean; control: boolean };

  const visitChildren = (node: Node, shadow: ShadowRoot | null, ctx: Context, out: Array<WalkNode | string>) => {
    for (const kid of flatChildren(node, shadow)) visit(kid, ctx, out);
  };

  /**
   * A flex or grid box of short items (a calendar's days, a toolbar, chips): the items that sit side by side on
   * screen are read as one line each (`VisualRow`), as a person reads them, instead of one line per item.
   */
  const visitLines = (el: Element, shadow: ShadowRoot | null, ctx: Context, out: Array<WalkNode | string>) => {
    const kids = flatChildren(el, shadow);
    const items = kids.filter(
      (kid): kid is HTMLElement => kid.nodeType === Node.ELEMENT_NODE && (kid as Element).getClientRects().length > 0,
    );
    // A heading keeps its own line: it says where the page's parts begin.
    const short = (item: HTMLElement) => {
      const text = item.innerText ?? '';
      return text.length <= MAX_LINE_ITEM && !text.includes('\n') && !item.matches(HEADINGS) && !item.querySelector(HEADINGS);
    };
    if (items.length < 3 || items.length > MAX_LINE_ITEMS || !items.every(short)) return visitChildren(el, shadow, ctx, out);
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
    if (lines === items.length) return visitChildren(el, shadow, ctx, out);
    let row: Array<WalkNode | string> | undefined;
    let current = 0;
    for (const kid of kids) {
      const line = lineOf.get(kid);
      if (line !== undefined && line !== current) {
        row = [];
        out.push({ r: 'VisualRow', c: row });
        current = line;
      }
      visit(kid, ctx, row ?? out);
    }
  };

  const visit = (node: Node, ctx: Context, out: Array<WalkNode | string>): void => {
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
    if (tag === 'canvas' && ctx.visible) return canvas(el as HTMLCanvasElement, out);
    if (SKIP_TAGS.has(tag)) return;
    const style = getComputedStyle(el);
    const display = style.display;
    if (display === 'none') return;
    const visible = style.visibility === 'visible';
    const pre = /^pre|break-spaces/.test(style.whiteSpace) || /^(preserve|break-spaces)/.test(style.whiteSpaceCollapse ?? '');
    if (ctx.depth >= options.maxDepth) {
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
    };
    const shadow = rootOf(el);
    if (el.getAttribute('aria-hidden') === 'true') {
      if (hiddenLeft > 0 && visible && el.children.length > 0 && (el as HTMLElement).innerText !== undefined) {
        const text = (el as HTMLElement).innerText ?? '';
        if (text.trim()) {
          hiddenLeft--;
          out.push({ r: 'generic', g: 1, h: { text, block: !display.startsWith('inline') } });
        }
      }
      return;
    }
    if (display === 'contents' || !visible) {
      visitChildren(el, shadow, inner, out);
      return;
    }
    let role = roleOf(el, tag);
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
      const name = nameOf(el, tag, 'image', () => '');
      if (name) out.push({ r: 'image', n: name });
      return;
    }
    if (role === 'Iframe') {
      const frame: WalkNode = { r: 'Iframe', i: idOf(el), n: clean(nameOf(el, tag, role, () => '')) };
      const stamp = el.getAttribute(options.frameAttribute);
      if (stamp !== null) frame.f = stamp;
      out.push(frame);
      return;
    }
    const clickable = !INTERACTIVE.has(role) && !focusable && actsOnClick(el, tag, style, ctx);
    // Inside a control only a handler of its own makes an element another thing to act on (not the cursor it inherits).
    if (INTERACTIVE.has(role) || focusable || clickable) inner.control = true;
    if (!role || role === 'none' || role === 'generic') {
      if (focusable || clickable) role = 'generic';
      // role=none takes the semantics away, not the layout: a block stays a block.
      else if (!inline) {
        const c: Array<WalkNode | string> = [];
        if (inner.flexParent) visitLines(el, shadow, inner, c);
        else visitChildren(el, shadow, inner, c);
        if (c.length) out.push({ r: 'generic', c });
        return;
      } else {
        // A flex or grid item is a box of its own, shown on its container's line: its words stay apart (`docs AM`).
        const boxed = ctx.flexParent && !display.startsWith('inline');
        if (boxed) out.push(' ');
        visitChildren(el, shadow, inner, out);
        if (boxed) out.push(' ');
        return;
      }
    }
    const c: Array<WalkNode | string> = [];
    if (tag === 'details' && !(el as HTMLDetailsElement).open) {
      // A closed <details> shows its summary only (the rest is hidden by content-visibility, not display).
      const summary = Array.from(el.children).find((kid) => kid.localName === 'summary');
      if (summary) visit(summary, inner, c);
    } else if (tag === 'select') {
      if (role === 'combobox') c.push(selectPopup(el as HTMLSelectElement));
      else visitChildren(el, shadow, inner, c);
    } else if (tag !== 'input' && tag !== 'textarea' && tag !== 'img' && role !== 'image') visitChildren(el, shadow, inner, c);
    // A time's machine-readable value follows its words (`March 14, 2024 (2024-03-14)`), unless it names a control.
    if (tag === 'time' && !inner.control && timesLeft > 0) {
      const stamp = datetimeOf(el, readText(c));
      if (stamp) {
        timesLeft--;
        c.push(` (${stamp})`);
      }
    }
    const result: WalkNode = { r: role };
    const actionable = INTERACTIVE.has(role) || focusable || clickable;
    if (NAMED.has(role) || focusable || clickable) {
      const name = nameOf(el, tag, role, () => readText(c));
      if (name) result.n = name;
    }
    const value = valueOf(el, tag, role);
    if (value !== undefined && value !== '') result.v = value;
    const p = states(el, tag, role, focusable);
    if (clickable) {
      p.clickable = true;
      // A custom widget says its state in a class only (`switch on`, `tab active`).
      const stated = Array.from(el.classList).find((name) => CLASS_STATE.test(name));
      if (stated) p.state = stated.replace(/^is-/, '').replace(/^sel$/, 'selected');
    }
    if (actionable && !result.n && !readText(c).trim()) {
      // A control with no words of its own borrows some: its icon's, or else the row it sits in.
      const icon = iconOf(el);
      // A link without words reads as its URL's last segment instead (the renderer's). The row names an icon's row too.
      const row = role === 'link' ? '' : rowText(el);
      const word = icon ? '' : classWord(el);
      if (icon || word) p.icon = icon || word;
      if (row) {
        result.n = row;
        p.borrowed = true;
      }
    }
    for (const _ in p) {
      result.p = p;
      break;
    }
    if (actionable) result.i = idOf(el);
    if (tag === 'input' && (el as HTMLInputElement).type === 'password') result.pw = 1;
    if (c.length) result.c = c;
    out.push(result);
  };

  const HANDLER_ATTRIBUTES = ['onclick', 'ondblclick', 'onmousedown', 'onpointerdown'];
  const CONTROLS =
    'a[href], button, input, select, textarea, [contenteditable=""], [contenteditable=true], [role=button], [role=link], [role=textbox]';
  /**
   * Whether a person would click an element that has no control role: it handles clicks (a listener or a handler
   * attribute), shows the pointer cursor first (its children inherit it), can be dragged, is a <label> whose control
   * is not shown (a styled checkbox), or covers the viewport (a start screen, an overlay to dismiss).
   */
  const actsOnClick = (el: Element, tag: string, style: CSSStyleDeclaration, ctx: Context): boolean => {
    if (tag === 'html' || tag === 'body') return false;
    // A listener on something that holds controls is a root the page delegates to (React, Vue): its controls count.
    if (listened.has(el) || HANDLER_ATTRIBUTES.some((attribute) => el.hasAttribute(attribute))) return !el.querySelector(CONTROLS);
    // Something that can be dragged is a target of its own, inside a drop zone too (a card in a board's column).
    if (el.getAttribute('draggable') === 'true') return true;
    // Inside a control, a glyph of its own that shows the pointer (a row's "⋯" menu, a tab's "×") is a target too.
    if (ctx.control) return style.cursor === 'pointer' && GLYPH.test((el.textContent ?? '').trim());
    if (style.cursor === 'pointer' && !ctx.pointer) return true;
    if (tag === 'label') {
      const control = (el as HTMLLabelElement).control;
      return !control || !control.checkVisibility();
    }
    if (style.position === 'fixed' || style.position === 'absolute') {
      const box = el.getBoundingClientRect();
      return box.width * box.height >= 0.9 * innerWidth * innerHeight && !el.querySelector(CONTROLS);
    }
    return false;
  };

  /** Icon class names: `fa-share`, `icon-trash`, `bi-x-lg`, `glyphicon-star`, `mdi-close`, `octicon-gear`. */
  const ICON_CLASS = /^(?:fa[srlbdk]?|icon|bi|glyphicon|mdi|octicon|ti|lucide|feather|ri|la|codicon|material-icons)[-_](.+)$/;
  const ICON_SKIP = /^(?:fw|lg|xs|sm|[0-9]+x|solid|regular|light|brands|outline|filled|spin|pulse|inverse|border|stack.*)$/;
  const CLASS_STATE = /^(?:is-)?(?:on|off|active|checked|selected|sel|current|open|enabled|expanded|collapsed)$/;
  /** A menu or close glyph and nothing else: `⋯`, `⋮`, `×`, `☰`. */
  const GLYPH = /^(?:⋯|⋮|…|\.\.\.|×|✕|✖|✗|☰|≡)$/;
  /** A plain class word or id on an element with no words (`<span class="trash">`), unless it only says how it is laid out. */
  const WORD_CLASS = /^[a-z][a-z-]{2,23}$/;
  const LAYOUT_CLASS =
    /^(?:icon|icons|btn|button|link|item|items|wrap|wrapper|container|inner|outer|content|row|col|cell|box|block|flex|grid|left|right|top|bottom|center|active|selected|disabled|hidden|visible|show|open|closed|clickable|pointer|small|large|big|main|header|footer|body|title|label|text|image|img|ui-.*|js-.*|is-.*|has-.*)$/;
  /** A short name for an element without words: a title, label or alt inside it, an <svg><title>, or an icon's class. */
  const iconOf = (el: Element): string => {
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
  };

  /** The last resort for a nameless control outside any row: a class word or id that says what it is (`trash`). */
  const classWord = (el: Element): string => {
    for (const name of [...Array.from(el.classList), el.id]) if (WORD_CLASS.test(name) && !LAYOUT_CLASS.test(name)) return name;
    return '';
  };

  /**
   * The text of the list item or table row a nameless control sits in (`[4] checkbox: buy milk`), or else of the
   * nearest of its two closest containers that has a few words besides it (a settings row: `Push notifications`).
   */
  const rowText = (el: Element): string => {
    const row = el.parentElement?.closest('li, tr, [role=row], [role=listitem], [role=option], [role=treeitem]');
    if (row) return clean(textOf(row, el)).slice(0, 120);
    for (let box = el.parentElement, up = 0; box && up < 2 && box !== document.body; box = box.parentElement, up++) {
      // A container holding other controls is a form, not a row: its words (another field's value, a Submit) are not this one's.
      if (Array.from(box.querySelectorAll(CONTROLS)).some((other) => other !== el && !el.contains(other))) return '';
      const words = clean(textOf(box, el));
      if (words) return words.length <= 120 ? words : '';
    }
    return '';
  };

  /**
   * A canvas drawn on the screen: nothing inside it can be read, so its place says where to click (coordinates are
   * viewport CSS pixels): `[7] canvas: 200x100 at 8,410`.
   */
  const canvas = (el: HTMLCanvasElement, out: Array<WalkNode | string>): void => {
    const box = el.getBoundingClientRect();
    if (box.width < 1 || box.height < 1 || getComputedStyle(el).visibility !== 'visible') return;
    const name = clean(el.getAttribute('aria-label') ?? el.getAttribute('title') ?? '');
    const at = `${Math.round(box.width)}x${Math.round(box.height)} at ${Math.round(box.left)},${Math.round(box.top)}`;
    out.push({ r: 'canvas', n: name ? `${name} (${at})` : at, i: idOf(el), p: { clickable: true } });
  };

  /** A label whose text names a rendered control, with no other control or link inside it. */
  const labelsItsControl = (label: HTMLLabelElement): boolean => {
    const control = label.control;
    if (!control || !control.checkVisibility()) return false;
    for (const inside of Array.from(label.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')))
      if (inside !== control) return false;
    return true;
  };

  const top: Array<WalkNode | string> = [];
  const startStyle = start.parentElement ? getComputedStyle(start.parentElement) : null;
  const ctx: Context = {
    visible: startStyle ? startStyle.visibility === 'visible' : true,
    pre: startStyle ? /^pre|break-spaces/.test(startStyle.whiteSpace) : false,
    flexParent: startStyle ? /flex|grid/.test(startStyle.display) : false,
    mute: false,
    depth: 0,
    pointer: startStyle ? startStyle.cursor === 'pointer' : false,
    control: false,
  };
  visit(start, ctx, top);
  const root: WalkNode = options.xpath === undefined ? { r: 'RootWebArea', n: document.title, c: top } : { r: 'generic', g: 1, c: top };
  return JSON.stringify({ ok: true, doc: state.doc, title: document.title, root, gone });
}

/**
 * The reader as a function declaration for CDP's Runtime.callFunctionOn. Bundlers that keep function names (tsx's
 * esbuild) wrap inner functions in `__name(...)`; the page has no such helper, so it is defined as a no-op around it.
 */
export const WALKER_SOURCE = `(() => { const __name = (fn) => fn; return (${walkPage.toString()}); })()`;
