import { ServiceError } from '../errors.js';
import { HAS_CLOSED_SHADOW } from '../settle/page-script.js';
import type { PageNode } from './tree.js';
import type { CDPSession } from 'playwright-core';
import type { Cdp } from '../page/cdp.js';
import { INTERACTIVE, type HiddenText } from './render.js';
import { pageMeta, type PageMeta } from './meta.js';
import { closedShadowTooLarge, MAX_CLOSED_ROOTS, MAX_PAGE_ELEMENTS, pageTooLarge } from './size.js';
import {
  WALKER_SOURCE,
  WALKER_STATE_KEY,
  type CountResult,
  type WalkNode,
  type WalkOptions,
  type WalkRefusal,
  type WalkResult,
} from './walker.js';

/** Playwright names its utility world `__playwright_utility_world_<page guid>` (crPage); looked up by this prefix. */
const UTILITY_WORLD_PREFIX = '__playwright_utility_world_';
/** Stamped on iframe elements with the session's id of the frame inside (frames.ts). */
export const FRAME_ATTRIBUTE = 'data-bsm-frame';
/** Most aria-hidden regions per frame whose on-screen text is read. */
const MAX_HIDDEN_REGIONS = 100;
/** Most `<time datetime>` values shown per frame (a feed's hundred timestamps stay affordable). */
const MAX_TIMES = 100;
const OBJECT_GROUP = 'bsm-pagetext';
const OWN_WORLD = 'bsm_pagetext';
/** Deepest element read as structure: real pages nest a few dozen levels; the walk is recursive (docs/pagetext.md). */
const MAX_DEPTH = 256;
/** Listener types that make an element something a person acts on (a drop target too: dragTo needs its ref). */
const ACTING_LISTENERS = new Set(['click', 'dblclick', 'contextmenu', 'mousedown', 'pointerdown', 'keydown', 'drop']);
/** Most elements with such listeners handed to the reader (each is one CDP call). */
const MAX_LISTENED = 500;
/**
 * Most JS event listeners the renderer may hold for them to be listed: the list names each one (about 150 bytes, on the
 * server's one thread), and the element cap bounds the elements, not their listeners (docs/pagetext.md).
 */
const MAX_LISTENERS = 50_000;

/** A frame's execution contexts over one CDP session: Playwright's utility world (the reader's) and the page's own. */
export interface FrameWorlds {
  /** CDP's id of the frame. */
  frameId: string;
  /** Whether the frame is the session's top frame (its document is the one DOM.getDocument answers). */
  top: boolean;
  /** Playwright's utility world; our own isolated world when Playwright has none in the frame (`own`). */
  utility?: number;
  own?: boolean;
  main?: number;
}

/** Worlds found, per CDP session and frame: they stay while the frame's document does (looked up again after). */
const KNOWN_WORLDS = new WeakMap<CDPSession, Map<string, FrameWorlds>>();

/**
 * The worlds of the frame `cdpFrameId` (the session's top frame when undefined), from the contexts the session lists
 * when Runtime is enabled on it. Enabled only for this look-up: Playwright's own session keeps it enabled, so the page
 * sees nothing new. Remembered until `fresh` is asked for (a call into a remembered world failed: a new document).
 */
export async function frameWorlds(cdp: Cdp, cdpFrameId?: string, fresh = false): Promise<FrameWorlds> {
  let known = KNOWN_WORLDS.get(cdp.session);
  if (!known) KNOWN_WORLDS.set(cdp.session, (known = new Map()));
  const remembered = fresh ? undefined : known.get(cdpFrameId ?? '');
  if (remembered) return remembered;
  const contexts: Array<{ id: number; name: string; auxData?: { frameId?: string; isDefault?: boolean } }> = [];
  const created = (event: { context: (typeof contexts)[number] }) => contexts.push(event.context);
  cdp.session.on('Runtime.executionContextCreated', created);
  try {
    const [tree] = await Promise.all([cdp.send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree'), cdp.send('Runtime.enable')]);
    const frameId = cdpFrameId ?? tree.frameTree.frame.id;
    const mine = contexts.filter((context) => context.auxData?.frameId === frameId);
    const worlds: FrameWorlds = {
      frameId,
      top: frameId === tree.frameTree.frame.id,
      utility: mine.filter((context) => context.name.startsWith(UTILITY_WORLD_PREFIX)).at(-1)?.id,
      main: mine.filter((context) => context.auxData?.isDefault).at(-1)?.id,
    };
    if (worlds.utility !== undefined) known.set(cdpFrameId ?? '', worlds);
    return worlds;
  } finally {
    cdp.session.off('Runtime.executionContextCreated', created);
    cdp.send('Runtime.disable').catch(() => undefined);
  }
}

/** Whether a CDP call failed because its world is gone (the frame's document changed since it was found). */
export function isStaleWorld(err: unknown): boolean {
  return !(err instanceof ServiceError) && /context|Execution|frame|target/i.test(String(err));
}

/** One frame read by the in-page reader: the tree the renderer walks, and what it needs beside it. */
export interface FrameRead {
  root: PageNode;
  /** The document's token: another value means a new document (ref numbers start again). */
  document: string;
  title: string;
  hidden: Map<number, HiddenText>;
  /** Elements that are password inputs. */
  passwords: Set<number>;
  /** Iframe elements' `data-bsm-frame` stamps, by element id. */
  frameStamps: Map<number, string>;
  worlds: FrameWorlds;
  /** Ids of elements that have left the document since the last whole read (none for a narrow read). */
  gone: number[];
  /** What the document says about itself (read when asked for). */
  meta?: PageMeta;
}

/**
 * Reads one frame (the session's top frame when `cdpFrameId` is undefined) with the in-page reader; `xpath` limits it
 * to one element's subtree, `meta` reads the document's metadata beside it. Refuses a page (or part) over
 * MAX_PAGE_ELEMENTS with `page_too_large`.
 */
export async function readFrame(cdp: Cdp, cdpFrameId: string | undefined, xpath?: string, meta = false): Promise<FrameRead> {
  try {
    return await readOnce(cdp, await frameWorlds(cdp, cdpFrameId), xpath, meta);
  } catch (err) {
    // The document went (a navigation since its worlds were found): once more, in the new one.
    if (!isStaleWorld(err)) throw err;
    return readOnce(cdp, await frameWorlds(cdp, cdpFrameId, true), xpath, meta);
  }
}

async function readOnce(cdp: Cdp, worlds: FrameWorlds, xpath: string | undefined, withMeta: boolean): Promise<FrameRead> {
  if (worlds.utility === undefined) {
    // Playwright makes its utility world in every frame; should one be missing, the reader gets a world of its own.
    const made = await cdp.send<{ executionContextId: number }>('Page.createIsolatedWorld', {
      frameId: worlds.frameId,
      worldName: OWN_WORLD,
    });
    Object.assign(worlds, { utility: made.executionContextId, own: true });
  }
  const options: WalkOptions = {
    xpath,
    maxElements: MAX_PAGE_ELEMENTS,
    maxHidden: MAX_HIDDEN_REGIONS,
    maxTimes: MAX_TIMES,
    maxDepth: MAX_DEPTH,
    frameAttribute: FRAME_ATTRIBUTE,
    interactiveRoles: [...INTERACTIVE],
    closedRoots: 0,
  };
  // The page is counted, and refused over the cap, before anything that costs in proportion to it: listing its
  // listeners, looking for its closed shadow roots. Asked beside the count: whether it made a closed shadow root, how
  // many listeners its renderer holds, and the metadata (its failure never costs the page text).
  const [counted, closedShadow, listeners, meta] = await Promise.all([
    walk<CountResult>(cdp, worlds, { ...options, countOnly: true }, []),
    madeClosedShadow(cdp, worlds),
    cdp.send<{ jsEventListeners: number }>('Memory.getDOMCounters').then((counters) => counters.jsEventListeners),
    withMeta ? pageMeta(cdp, worlds).catch(() => undefined) : undefined,
  ]);
  if (!counted.ok) throw refusal(counted, xpath);
  let result: WalkResult;
  try {
    const roots = closedShadow ? await closedShadowRoots(cdp, worlds) : [];
    // The renderer's own count, over all its documents and listeners not yet collected with their nodes, bounds this
    // document's (forcing a collection first cost 1.5 s).
    const listened = listeners <= MAX_LISTENERS ? await listenedElements(cdp, worlds) : [];
    result = await walk<WalkResult>(cdp, worlds, { ...options, closedRoots: roots.length }, [...roots, ...listened]);
  } finally {
    await releaseObjects(cdp);
  }
  if (!result.ok) throw refusal(result, xpath);
  return { ...toTree(result.root), document: result.doc, title: result.title, worlds, gone: result.gone, ...(meta ? { meta } : {}) };
}

function refusal(refused: WalkRefusal, xpath: string | undefined): ServiceError {
  if (refused.error === 'too_large') return pageTooLarge(refused.elements, refused.scoped);
  if (refused.error === 'not_found')
    return new ServiceError('selector_not_found', `The selector ${JSON.stringify(xpath)} matches nothing on the page.`);
  return new ServiceError('invalid_argument', `selector is not a valid XPath: ${refused.message}`);
}

/** Whether the frame's document made a closed shadow root (its tracker saw one made). */
async function madeClosedShadow(cdp: Cdp, worlds: FrameWorlds): Promise<boolean> {
  if (worlds.main === undefined) return false;
  const asked = await cdp.send<{ result: { value?: unknown } }>('Runtime.evaluate', {
    expression: HAS_CLOSED_SHADOW,
    contextId: worlds.main,
    returnByValue: true,
  });
  return asked.result.value === true;
}

/**
 * One run of the reader in the frame's world; `handed` are objects of that world: the frame's closed shadow roots
 * (`options.closedRoots` of them), then the elements with acting listeners.
 */
async function walk<T extends WalkResult | CountResult>(cdp: Cdp, worlds: FrameWorlds, options: WalkOptions, handed: string[]): Promise<T> {
  const evaluated = await cdp.send<{
    result: { value?: unknown };
    exceptionDetails?: { exception?: { description?: string }; text?: string };
  }>('Runtime.callFunctionOn', {
    functionDeclaration: WALKER_SOURCE,
    executionContextId: worlds.utility,
    arguments: [{ value: options }, ...handed.map((objectId) => ({ objectId }))],
    returnByValue: true,
  });
  if (evaluated.exceptionDetails) {
    const reason = (evaluated.exceptionDetails.exception?.description ?? evaluated.exceptionDetails.text ?? 'unknown error').split(
      '\n',
    )[0]!;
    if (reason.startsWith('RangeError'))
      throw new ServiceError(
        'page_too_large',
        `The page is nested too deeply to read (${reason}). Pass a selector (XPath) for the part you need.`,
      );
    throw new Error(`The page text reader failed in the page: ${reason}`);
  }
  return JSON.parse(String(evaluated.result.value)) as T;
}

/**
 * The frame's elements with a click, dblclick, contextmenu, mousedown, pointerdown, keydown or drop listener (added by addEventListener, a
 * handler property or attribute), as objects of the reader's world. One DOMDebugger call lists every listener of the
 * document, invisible to the page (no script of ours in its world); a handler the page delegates to its root (React,
 * Vue) is on the root, so it marks nothing: those elements are reached by selector or coordinates. Released with
 * OBJECT_GROUP. Asked only when the renderer holds at most MAX_LISTENERS listeners: the reply lists each one.
 */
async function listenedElements(cdp: Cdp, worlds: FrameWorlds): Promise<string[]> {
  // Asked of the page's own world: Chromium lists the listeners of the world the node object belongs to. `document` is
  // unforgeable, so no script of the page runs.
  if (worlds.main === undefined) return [];
  const doc = await cdp.send<{ result: { objectId?: string } }>('Runtime.evaluate', {
    expression: 'document',
    contextId: worlds.main,
    objectGroup: OBJECT_GROUP,
  });
  if (!doc.result.objectId) return [];
  const { listeners } = await cdp.send<{ listeners: Array<{ type: string; backendNodeId?: number }> }>('DOMDebugger.getEventListeners', {
    objectId: doc.result.objectId,
    depth: -1,
    // Not `pierce`: Chromium 150's renderer crashed on it after a scoped read and a reload (shadow roots' and
    // frames' listeners are left out: a frame is read, and asked, on its own).
    pierce: false,
  });
  const nodes = new Set<number>();
  for (const listener of listeners)
    if (listener.backendNodeId !== undefined && ACTING_LISTENERS.has(listener.type) && nodes.size < MAX_LISTENED)
      nodes.add(listener.backendNodeId);
  return inReaderWorld(cdp, worlds, [...nodes]);
}

/**
 * The frame's closed shadow roots, as objects of the reader's world (a script cannot reach them), from the browser's
 * copy of the whole DOM (DOM.getDocument), asked only when the page's tracker saw one made. The browser counts the
 * elements first, those of closed roots and same-process frames included, and a page over MAX_PAGE_ELEMENTS is refused
 * before its DOM is sent: the count is DevTools' element search for "<" (every tag), which answers a number alone.
 * Released with OBJECT_GROUP.
 */
async function closedShadowRoots(cdp: Cdp, worlds: FrameWorlds): Promise<string[]> {
  try {
    await cdp.send('DOM.enable');
    const search = await cdp.send<{ searchId: string; resultCount: number }>('DOM.performSearch', { query: '<' });
    cdp.send('DOM.discardSearchResults', { searchId: search.searchId }).catch(() => undefined);
    if (search.resultCount > MAX_PAGE_ELEMENTS) throw closedShadowTooLarge(search.resultCount);
    const { root } = await cdp.send<{ root: DomNode }>('DOM.getDocument', { depth: -1, pierce: true });
    const found: number[] = [];
    // Depth-first with a stack of its own: a page nested thousands deep would overflow a recursive walk.
    const stack: Array<{ node: DomNode; inFrame: boolean }> = [{ node: root, inFrame: worlds.top }];
    for (let next = stack.pop(); next; next = stack.pop()) {
      const { node, inFrame } = next;
      for (const shadow of node.shadowRoots ?? []) {
        if (inFrame && shadow.shadowRootType === 'closed') found.push(shadow.backendNodeId);
        stack.push({ node: shadow, inFrame });
      }
      for (const kid of node.children ?? []) stack.push({ node: kid, inFrame });
      if (node.contentDocument) stack.push({ node: node.contentDocument, inFrame: node.frameId === worlds.frameId });
    }
    if (found.length > MAX_CLOSED_ROOTS) throw closedShadowTooLarge(search.resultCount, found.length);
    return await inReaderWorld(cdp, worlds, found);
  } finally {
    // Left on, the DOM domain would send the server every later change of the nodes getDocument sent.
    cdp.send('DOM.disable').catch(() => undefined);
  }
}

/** Nodes resolved at once: a few hundred CDP calls in one go would hold the server's thread for as long. */
const RESOLVE_BATCH = 50;

/** Nodes as objects of the reader's world, released with OBJECT_GROUP; one gone meanwhile is left out. */
async function inReaderWorld(cdp: Cdp, worlds: FrameWorlds, backendNodeIds: number[]): Promise<string[]> {
  const objects: Array<string | undefined> = [];
  for (let from = 0; from < backendNodeIds.length; from += RESOLVE_BATCH) {
    const batch = backendNodeIds.slice(from, from + RESOLVE_BATCH).map((backendNodeId) =>
      cdp
        .send<{ object: { objectId?: string } }>('DOM.resolveNode', {
          backendNodeId,
          executionContextId: worlds.utility,
          objectGroup: OBJECT_GROUP,
        })
        .then(
          (resolved) => resolved.object.objectId,
          (err: unknown) => {
            if (err instanceof ServiceError) throw err;
            return undefined;
          },
        ),
    );
    objects.push(...(await Promise.all(batch)));
  }
  return objects.filter((id): id is string => id !== undefined);
}

interface DomNode {
  backendNodeId: number;
  frameId?: string;
  shadowRootType?: string;
  children?: DomNode[];
  shadowRoots?: DomNode[];
  contentDocument?: DomNode;
}

/** The reader's answer as the tree the renderer walks, with what it needs beside it gathered on the way. */
function toTree(top: WalkNode): Omit<FrameRead, 'document' | 'title' | 'worlds' | 'meta' | 'gone'> {
  const hidden = new Map<number, HiddenText>();
  const passwords = new Set<number>();
  const frameStamps = new Map<number, string>();
  let hiddenId = -1;
  /** Elements holding an iframe. */
  const framed = new Set<PageNode>();
  const add = (walked: WalkNode | string, parent: PageNode | undefined): PageNode => {
    if (typeof walked === 'string') return { role: 'StaticText', name: walked, ignored: false, parent, children: [] };
    const node: PageNode = { role: walked.r, name: walked.n ?? '', ignored: walked.g === 1, parent, children: [] };
    if (walked.v !== undefined) node.value = walked.v;
    if (walked.p) node.props = walked.p;
    if (walked.i !== undefined) node.elementId = walked.i;
    if (walked.h) {
      node.elementId = hiddenId--;
      hidden.set(node.elementId, walked.h);
    }
    if (walked.pw && walked.i !== undefined) passwords.add(walked.i);
    if (walked.f !== undefined && walked.i !== undefined) frameStamps.set(walked.i, walked.f);
    if (walked.c) node.children = walked.c.map((kid) => add(kid, node));
    if (node.children.some((kid) => kid.role === 'Iframe' || framed.has(kid))) {
      framed.add(node);
      if (!INTERACTIVE.has(node.role)) asContainer(node);
    }
    return node;
  };
  return { root: add(top, undefined), hidden, passwords, frameStamps };
}

/** What makes an element with no control role one line with a ref, its content folded into its name. */
const ACTING_PROPS = ['clickable', 'focusable', 'state', 'icon', 'borrowed'];

/**
 * An element that only handles clicks or takes focus, and holds a frame, is read as a container: React and Vue listen
 * on the app's root element, which the walker takes for a target when it holds no control, and a target is one line
 * whose content the renderer folds into its name, so a frame inside (an app that embeds frames) would never be read.
 * A person acts on what is in the frame, as on the controls an element delegates for (walker/clickable.ts).
 */
function asContainer(node: PageNode): void {
  if (!node.props || !ACTING_PROPS.some((prop) => prop in node.props!)) return;
  const props = Object.fromEntries(Object.entries(node.props).filter(([prop]) => !ACTING_PROPS.includes(prop)));
  if (Object.keys(props).length) node.props = props;
  else delete node.props;
}

/**
 * Puts the element `elementId` of the latest read of `document` in the ref table of the reader's world, where the ref
 * engine finds it as `ref`; false when it has left the document, or the frame holds another document now.
 */
export async function registerElement(
  cdp: Cdp,
  contextId: number,
  target: { document: string; elementId: number },
  ref: string,
  tableKey: string,
): Promise<boolean> {
  const registered = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
    functionDeclaration: `function (stateKey, tableKey, doc, id, ref) {
      const state = window[Symbol.for(stateKey)];
      const element = state && state.doc === doc ? state.nodes.get(id)?.deref() : undefined;
      if (!element || !element.isConnected) return false;
      (window[Symbol.for(tableKey)] ??= new Map()).set(ref, new WeakRef(element));
      return true;
    }`,
    executionContextId: contextId,
    arguments: [{ value: WALKER_STATE_KEY }, { value: tableKey }, { value: target.document }, { value: target.elementId }, { value: ref }],
    returnByValue: true,
  });
  return registered.result.value === true;
}

/** The element `elementId` of the latest read as a CDP object of the reader's world (released with OBJECT_GROUP). */
export async function elementObject(cdp: Cdp, contextId: number, elementId: number): Promise<string | undefined> {
  const found = await cdp.send<{ result: { objectId?: string; subtype?: string } }>('Runtime.callFunctionOn', {
    functionDeclaration: `function (stateKey, id) { return window[Symbol.for(stateKey)]?.nodes.get(id)?.deref() ?? null; }`,
    executionContextId: contextId,
    arguments: [{ value: WALKER_STATE_KEY }, { value: elementId }],
    objectGroup: OBJECT_GROUP,
  });
  return found.result.subtype === 'null' ? undefined : found.result.objectId;
}

export async function releaseObjects(cdp: Cdp): Promise<void> {
  await cdp.send('Runtime.releaseObjectGroup', { objectGroup: OBJECT_GROUP }).catch(() => undefined);
}
