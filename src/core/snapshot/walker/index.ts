/**
 * The page text's reader, run inside the page (Playwright's utility world of each frame, out of the page's reach): it
 * walks the DOM once, the flat tree (open shadow roots, slots, and closed roots handed in by the caller) in document
 * order, and answers a small tree of what the page text shows: roles, names, values and states, text, and a stable id
 * on every element that may get a ref. Chromium's own accessibility tree (CDP getFullAXTree) answered the same in one
 * reply of about 800 bytes an element, built and serialised by the renderer and parsed on the server's one thread;
 * this reply is a few bytes a word and is built by a DOM walk like Playwright's own ariaSnapshot.
 *
 * This folder is the page script, bundled by `npm run bundle:walker` (scripts/bundle-walker.ts) into one function
 * expression, `WALKER_SOURCE` (walker-source.generated.ts). It runs in the page, so it imports nothing from outside
 * this folder (test/boundaries.test.ts holds that), and keeps no state of its own between calls: what a document
 * keeps from read to read is in its world (state.ts), what one read needs is its `Walk`.
 */
import { ARIA_ROLES, NAMED } from './roles.js';
import { documentState, forgetGone } from './state.js';
import type { WalkNode, WalkOptions } from './types.js';
import { visit } from './visit.js';
import { countIn, type Context, type Walk } from './walk.js';

/**
 * Reads the document (or the part `options.xpath` names) and answers a `WalkResult` as JSON (a `CountResult` with
 * `options.countOnly`). `handed` are objects of the reader's world: the frame's closed shadow roots
 * (`options.closedRoots` of them), then the elements with acting listeners.
 */
export function walkPage(options: WalkOptions, ...handed: Array<ShadowRoot | Element>): string {
  const state = documentState();
  const closed = new Map<Element, ShadowRoot>();
  for (const root of handed.slice(0, options.closedRoots) as ShadowRoot[]) if (root && root.host) closed.set(root.host, root);
  const listened = new Set<Element>(handed.slice(options.closedRoots) as Element[]);
  const interactive = new Set(options.interactiveRoles);
  const walk: Walk = {
    options,
    state,
    closed,
    listened,
    interactive,
    named: new Set([...interactive, ...NAMED]),
    ariaRoles: new Set([...interactive, ...ARIA_ROLES]),
    hiddenLeft: options.maxHidden,
    timesLeft: options.maxTimes,
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
  const elements = start ? countIn(walk, options.xpath === undefined ? document : start) : 0;
  if (elements > options.maxElements)
    return JSON.stringify({ ok: false, error: 'too_large', elements, scoped: options.xpath !== undefined });
  if (options.countOnly) return JSON.stringify({ ok: true, elements });
  // A whole read forgets elements that have left (and says which, so their refs can pass to their replacements); a
  // narrow read (xpath) adds to what the last reads found.
  const gone = options.xpath === undefined ? forgetGone(state) : [];
  if (!start) return JSON.stringify({ ok: true, doc: state.doc, title: document.title, root: { r: 'RootWebArea', c: [] }, gone });

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
    delegated: false,
  };
  visit(walk, start, ctx, top);
  const root: WalkNode = options.xpath === undefined ? { r: 'RootWebArea', n: document.title, c: top } : { r: 'generic', g: 1, c: top };
  return JSON.stringify({ ok: true, doc: state.doc, title: document.title, root, gone });
}
