import type { Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { bounded, DEFAULT_CALL_TIMEOUT_MS, pageSession } from '../page/cdp.js';
import { frameWorlds } from '../snapshot/read.js';
import { PAGE_REFS_KEY } from '../page/ref-engine.js';
import { checkSelector } from './selector.js';
import { REFS, type RefTarget } from '../snapshot/refs.js';
import type { ElementRef } from '../snapshot/types.js';
import { WALKER_STATE_KEY } from '../snapshot/walker.js';

/** Candidates a `selector_ambiguous` error lists. */
const MAX_CANDIDATES = 5;
/** Longest text shown of a candidate or of the element under a point. */
const MAX_TEXT = 60;
/** Most words of an element's name a message repeats. */
const MESSAGE_NAME_WORDS = 5;
/** Refs inside a cover a `element_covered` error names (its buttons, most often). */
const MAX_COVER_REFS = 3;
/** Longest read of what covers an element: it only words an error. */
const COVER_READ_MS = 1_000;

/** A point in the viewport, CSS pixels, as a screenshot at scale 1 shows it. */
export interface Point {
  x: number;
  y: number;
}

/**
 * The one visible element a Playwright selector (`css=`, `xpath=`, `text=`, `role=button[name="Save"]`, `>>` chains)
 * matches on the session's page. Several visible matches are `selector_ambiguous`, listing the first ones with a
 * selector for each; none is `selector_not_found`. Engines other than Playwright's public ones are refused (selector.ts).
 */
export async function resolveSelector(session: Session, selector: string, timeoutMs: number): Promise<Locator> {
  const given = selector.trim();
  if (!given)
    throw new ServiceError('invalid_argument', 'selector is empty; pass a Playwright selector such as "text=Save" or "css=#start".');
  checkSelector(given);
  const all = session.page.locator(given);
  const watched = session.watched;
  const count = await bounded(Promise.race([all.count(), watched.crash]), timeoutMs, `finding ${given}`).catch((err: unknown) => {
    if (err instanceof ServiceError) throw err;
    // The renderer died under the lookup: that is the page's failure, not the selector's.
    if (
      watched.crashed ||
      watched.page.isClosed() ||
      /Target crashed|Target (page, context or browser )?(has been )?closed/i.test(String(err))
    )
      throw new ServiceError('page_crashed', 'The page crashed or closed while the selector was looked up. Navigate again to continue.', {
        cause: err,
      });
    throw new ServiceError('invalid_argument', `selector ${JSON.stringify(given)} is not a valid Playwright selector: ${firstLine(err)}`, {
      cause: err,
    });
  });
  const visible = all.filter({ visible: true });
  const shown = count === 0 ? 0 : await bounded(visible.count(), timeoutMs, `finding ${given}`);
  if (shown === 1) return visible;
  if (shown === 0)
    throw new ServiceError(
      'selector_not_found',
      count === 0
        ? `The selector ${JSON.stringify(given)} matches nothing on the page. Read the page text for its words, or use a ref.`
        : `The selector ${JSON.stringify(given)} matches ${count} element${count === 1 ? '' : 's'}, none of them visible.`,
    );
  const texts = await Promise.all(
    Array.from({ length: Math.min(shown, MAX_CANDIDATES) }, (_, i) =>
      visible
        .nth(i)
        .innerText({ timeout: Math.min(timeoutMs, 2_000) })
        .then(
          (text) => session.recording.secrets.mask(clip(text)),
          () => '',
        ),
    ),
  );
  const listed = texts.map((text, i) => `${JSON.stringify(`${given} >> nth=${i}`)}${text ? ` (${JSON.stringify(text)})` : ''}`);
  throw new ServiceError(
    'selector_ambiguous',
    `The selector ${JSON.stringify(given)} matches ${shown} visible elements; make it match one: ${listed.join(', ')}${shown > MAX_CANDIDATES ? ', ...' : ''}.`,
    { details: { matches: shown, candidates: texts.map((text, i) => ({ selector: `${given} >> nth=${i}`, text })) } },
  );
}

/** A point inside the viewport, or `invalid_argument` naming the viewport's size. */
export async function checkPoint(session: Session, point: Point): Promise<Point> {
  const size =
    session.page.viewportSize() ??
    (await bounded(
      session.page.evaluate(() => ({ width: innerWidth, height: innerHeight })),
      DEFAULT_CALL_TIMEOUT_MS,
      'measuring the viewport',
    ));
  if (point.x < 0 || point.y < 0 || point.x >= size.width || point.y >= size.height)
    throw new ServiceError(
      'invalid_argument',
      `The point (${point.x}, ${point.y}) is outside the viewport (${size.width} x ${size.height} CSS pixels); coordinates are viewport CSS pixels, as a screenshot at scale 1 shows them.`,
    );
  return point;
}

/**
 * What is drawn at a point of the viewport, for the result's message: `button "Save"`, `canvas`. Asked over CDP, out
 * of the page's reach; '' when nothing answers.
 */
export async function describePoint(session: Session, point: Point): Promise<string> {
  try {
    const cdp = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
    const { backendNodeId } = await cdp.send<{ backendNodeId: number }>('DOM.getNodeForLocation', {
      x: Math.round(point.x),
      y: Math.round(point.y),
      includeUserAgentShadowDOM: false,
    });
    const worlds = await frameWorlds(cdp);
    const { object } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', {
      backendNodeId,
      executionContextId: worlds.utility,
    });
    if (!object.objectId) return '';
    const { result } = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      objectId: object.objectId,
      functionDeclaration: `function () {
        const el = this.nodeType === 1 ? this : this.parentElement;
        if (!el) return '';
        const text = (el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') || '').replace(/\\s+/g, ' ').trim();
        return { tag: el.localName, text };
      }`,
      returnByValue: true,
    });
    await cdp.send('Runtime.releaseObject', { objectId: object.objectId }).catch(() => undefined);
    const found = result.value as { tag: string; text: string } | '';
    if (!found) return '';
    // The page's background says nothing of what is drawn there.
    if (found.tag === 'html' || found.tag === 'body') return '';
    // Page words in an answer: the session's secrets masked, as in the page text.
    return found.text ? `${found.tag} ${JSON.stringify(session.recording.secrets.mask(clip(found.text)))}` : found.tag;
  } catch {
    return '';
  }
}

function clip(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > MAX_TEXT ? `${one.slice(0, MAX_TEXT - 1)}…` : one;
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .replace(/^locator\.count: /, '');
}

/** `button "Sign in"`: a ref's element as act's messages name it, its role and the first words of its name. */
export function refWords(target: ElementRef): string {
  // The ref's line is in the page text (and the diff): a few words say which one it was; a bare "generic" says nothing.
  const role = target.role === 'generic' ? '' : target.role;
  const words = target.name.split(' ');
  const name = words.length > MESSAGE_NAME_WORDS ? `${words.slice(0, MESSAGE_NAME_WORDS).join(' ')}…` : target.name;
  return [role, name && JSON.stringify(name)].filter(Boolean).join(' ') || 'element';
}

/** What takes the pointer at an element's centre instead of the element. */
export type Cover =
  /**
   * Another element: `cover` as the page text names it (`[12] dialog "Cookie settings"`), `inside` the refs in it;
   * `layer` when it is a dialog or a fixed box over the page, not something drawn on the element (a styled checkbox).
   */
  | { kind: 'element'; cover: string; ref?: string; inside: string[]; layer: boolean }
  /** The page itself, as the element does not take the pointer: pointer-events none, set on `source` (or on it). */
  | { kind: 'pointer-events'; at: Point; source?: string }
  /** The page itself: the element's box lies outside the viewport. */
  | { kind: 'outside'; at: Point }
  /** The page itself: nothing of the element is drawn where its box is. */
  | { kind: 'elsewhere'; at: Point };

/** What the reader's world says is drawn at a point: the page itself (`root`), or the element's outermost layer there. */
interface DrawnAt {
  doc?: string;
  root?: boolean;
  cover?: DrawnElement;
  /** The open dialog the cover is the backdrop of: it holds the dialog, or has no words of its own. */
  dialog?: DrawnElement;
  /** Reader ids of elements inside the cover (or its dialog). */
  inside?: number[];
  /** The element hit is the one acted on, or inside it. */
  self?: boolean;
  /** The cover is a dialog or a fixed or sticky box, not the element hit itself. */
  layer?: boolean;
}

interface DrawnElement {
  tag: string;
  role: string;
  name: string;
  cls: string;
  id?: number;
}

/**
 * What is drawn over the element at the centre of its visible part, where a click lands, in the page text's words;
 * undefined when nothing answers, or the element acted on by `ref` is itself there (the cover has just gone). Asked
 * over CDP and read in the reader's world, out of the page's reach, but for whether the element takes the pointer.
 */
export async function coverOf(session: Session, element: Locator, ref?: string): Promise<Cover | undefined> {
  const box = await element.boundingBox({ timeout: COVER_READ_MS }).catch(() => null);
  if (!box) return undefined;
  const view = session.page.viewportSize();
  const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const left = Math.max(box.x, 0);
  const top = Math.max(box.y, 0);
  const right = Math.min(box.x + box.width, view?.width ?? Infinity);
  const bottom = Math.min(box.y + box.height, view?.height ?? Infinity);
  if (right <= left || bottom <= top) return { kind: 'outside', at: centre };
  const at = { x: (left + right) / 2, y: (top + bottom) / 2 };
  const drawn = await drawnAt(session, at, ref).catch(() => undefined);
  if (!drawn) return undefined;
  if (drawn.root) {
    const source = await pointerEventsSource(element);
    return source === undefined ? { kind: 'elsewhere', at } : { kind: 'pointer-events', at, ...(source ? { source } : {}) };
  }
  if (!drawn.cover || drawn.self) return undefined;
  const refs = [...session.state.get(REFS).values()].filter((target) => target.document === drawn.doc);
  const refOf = (id: number | undefined) => (id === undefined ? undefined : refs.find((target) => target.elementId === id));
  const named = (element: DrawnElement) => {
    const known = refOf(element.id);
    const words = element.name ? ` ${JSON.stringify(session.recording.secrets.mask(clip(element.name)))}` : '';
    // A nameless element borrows its class: an overlay's is often all it has.
    const seen = `${element.role || element.tag}${words || (element.cls ? ` with class ${JSON.stringify(element.cls)}` : '')}`;
    if (!known) return seen;
    const said = refWords(known);
    return `[${known.ref}] ${said === 'element' ? seen : said}`;
  };
  const cover = drawn.dialog ? `the backdrop of ${named(drawn.dialog)} (${named(drawn.cover)})` : named(drawn.cover);
  const inside = (drawn.inside ?? [])
    .map(refOf)
    .filter((target): target is RefTarget => target !== undefined)
    .slice(0, MAX_COVER_REFS)
    .map((target) => `[${target.ref}] ${refWords(target)}`);
  const coverRef = (refOf(drawn.dialog?.id) ?? refOf(drawn.cover.id))?.ref;
  return { kind: 'element', cover, inside, layer: drawn.layer === true, ...(coverRef ? { ref: coverRef } : {}) };
}

/** What is drawn at a point of the viewport, read in the reader's world of the frame there. */
async function drawnAt(session: Session, point: Point, ref: string | undefined): Promise<DrawnAt | undefined> {
  const cdp = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
  const { backendNodeId, frameId } = await cdp.send<{ backendNodeId: number; frameId: string }>('DOM.getNodeForLocation', {
    x: Math.round(point.x),
    y: Math.round(point.y),
    includeUserAgentShadowDOM: false,
  });
  const worlds = await frameWorlds(cdp, frameId);
  if (worlds.utility === undefined) return undefined;
  const { object } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', {
    backendNodeId,
    executionContextId: worlds.utility,
  });
  if (!object.objectId) return undefined;
  try {
    const { result } = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      objectId: object.objectId,
      functionDeclaration: DRAWN_AT,
      arguments: [{ value: WALKER_STATE_KEY }, { value: MAX_COVER_REFS * 10 }, { value: PAGE_REFS_KEY }, { value: ref ?? null }],
      returnByValue: true,
    });
    return (result.value ?? undefined) as DrawnAt | undefined;
  } finally {
    await cdp.send('Runtime.releaseObject', { objectId: object.objectId }).catch(() => undefined);
  }
}

/**
 * Run on the element hit at a point (`this`): the page itself (`<html>`, `<body>`), the element acted on (its `ref`
 * in the ref table), or the layer the hit is drawn in (its dialog, else its outermost fixed or sticky box), with the
 * reader's ids of what that holds.
 */
const DRAWN_AT = `function (stateKey, max, refsKey, ref) {
  const state = window[Symbol.for(stateKey)];
  const table = window[Symbol.for(refsKey)];
  const self = ref !== null && table ? table.get(ref)?.deref() : undefined;
  const hit = this.nodeType === 1 ? this : this.parentElement;
  const doc = state ? state.doc : undefined;
  if (!hit || hit === document.documentElement || hit === document.body) return { doc, root: true };
  const parentOf = (el) => el.parentElement || (el.parentNode instanceof ShadowRoot ? el.parentNode.host : null);
  const TAG_ROLES = { dialog: 'dialog', nav: 'navigation', header: 'banner', footer: 'contentinfo', aside: 'complementary', form: 'form', img: 'image', button: 'button', a: 'link' };
  const roleOf = (el) => (el.getAttribute('role') || '').split(' ')[0] || TAG_ROLES[el.localName] || '';
  const isDialog = (el) => /dialog/.test(roleOf(el)) || el.getAttribute('aria-modal') === 'true';
  const text = (value) => (value || '').replace(/\\s+/g, ' ').trim();
  const nameOf = (el) => {
    const labels = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).map((id) => id && document.getElementById(id)).filter(Boolean);
    const heading = isDialog(el) ? el.querySelector('h1, h2, h3, [role=heading]') : null;
    return text(el.getAttribute('aria-label') || labels.map((label) => label.innerText).join(' ') || el.getAttribute('title') || (heading && heading.innerText) || el.innerText).slice(0, 200);
  };
  const describe = (el) => ({ tag: el.localName, role: roleOf(el), name: nameOf(el), cls: typeof el.className === 'string' ? el.className.trim().split(/\\s+/)[0] : '', id: state ? state.ids.get(el) : undefined });
  let dialogLayer;
  let fixedLayer;
  for (let el = hit; el && el !== document.body && el !== document.documentElement; el = parentOf(el)) {
    if (el === self) return { doc, self: true };
    if (!dialogLayer && isDialog(el)) dialogLayer = el;
    const position = getComputedStyle(el).position;
    if (position === 'fixed' || position === 'sticky') fixedLayer = el;
  }
  const layer = dialogLayer || fixedLayer || hit;
  let holder = layer;
  let dialog;
  let cover = describe(layer);
  if (!dialogLayer) {
    const DIALOGS = 'dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]';
    const held = [...layer.querySelectorAll(DIALOGS)].filter((el) => el.getClientRects().length);
    const open = held.length || cover.name ? held : [...document.querySelectorAll(DIALOGS)].filter((el) => el.getClientRects().length);
    if (open.length) {
      holder = open[open.length - 1];
      dialog = describe(holder);
      // A backdrop holding its dialog has the dialog's words: it is named by its dialog alone.
      if (held.length) cover = { ...cover, name: '' };
    }
  }
  const inside = [];
  if (state) for (const el of holder.querySelectorAll('*')) {
    const id = state.ids.get(el);
    if (id !== undefined) inside.push(id);
    if (inside.length >= max) break;
  }
  return { doc, cover, dialog, inside, layer: Boolean(dialogLayer || fixedLayer) };
}`;

/**
 * Where `pointer-events: none` that keeps the element from the pointer is set: '' on the element itself, `<body>` or
 * `<div class="palette">` on a container; undefined when the element takes the pointer. Asked in the page's world.
 */
async function pointerEventsSource(element: Locator): Promise<string | undefined> {
  const source = await element
    .evaluate(
      (el) => {
        if (getComputedStyle(el).pointerEvents !== 'none') return null;
        let from = el;
        for (let up = el.parentElement; up && getComputedStyle(up).pointerEvents === 'none'; up = up.parentElement) from = up;
        if (from === el) return '';
        const cls = typeof from.className === 'string' ? from.className.trim().split(/\s+/)[0] : '';
        return `<${from.localName}${from.id ? ` id="${from.id}"` : cls ? ` class="${cls}"` : ''}>`;
      },
      undefined,
      { timeout: COVER_READ_MS },
    )
    .catch(() => null);
  return source ?? undefined;
}
