import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, frameSession, type Cdp } from '../page/cdp.js';
import { frameWorlds, isStaleWorld } from '../snapshot/read.js';
import { OVERLAY_ATTRIBUTE } from '../settle/index.js';
import { MIN_MASKED_LENGTH, reformattedPattern } from '../variables.js';
import { overlayRemover, type Region } from './annotate.js';

/** The colour the masks are painted in: Playwright's own screenshot mask colour. */
export const MASK_COLOUR = '#FF00FF';
/** Frames looked into per shot, and how deep; a frame past these is masked whole. */
const MAX_FRAMES = 50;
const MAX_FRAME_DEPTH = 8;
/** Where the reader's world of a frame keeps the iframe elements FIND saw, for the frame ids behind them. */
const FRAMES_KEY = 'bsm.maskFrames';

type Box = [x: number, y: number, width: number, height: number];

interface Found {
  /** Boxes to mask, in the frame's viewport, CSS px. */
  boxes: Box[];
  /** Each iframe's content box in the frame's viewport. */
  frames: Box[];
  /** Too much matched to list: mask the whole frame. */
  whole: boolean;
}

/** A frame to look into: how to reach it over CDP, and where its viewport shows in the main one. */
interface FrameVisit {
  cdp: Cdp;
  /** CDP's id of the frame; undefined for the top frame of `cdp`. */
  cdpFrameId?: string;
  offset: { x: number; y: number };
  /** The part of the main viewport the frame shows; undefined for the main frame (a full page shows past it). */
  clip?: Region;
  depth: number;
}

/**
 * Covers, for one screenshot, every element whose text or value holds one of the session's secrets (as typed or
 * reformatted: variables.ts reformattedPattern) and every filled password field (its dots tell the length), in every
 * frame: each frame's text and fields are searched in Playwright's utility world (the page cannot see the patterns),
 * the boxes painted in MASK_COLOUR on an overlay of the main document (a closed shadow root in the top layer, above a
 * modal dialog too). Answers how many boxes, and how to take the overlay away again after the shot.
 */
export async function maskSecrets(session: Session, main: Cdp): Promise<{ masked: number; remove: () => Promise<void> }> {
  const patterns = session.recording.secrets.entries().flatMap(([value]) => {
    const pattern = value.length >= MIN_MASKED_LENGTH ? reformattedPattern(value) : undefined;
    return pattern ? [[pattern.source, pattern.flags]] : [];
  });
  const children = new OwnSessions(session, main);
  try {
    const boxes: Region[] = [];
    const queue: FrameVisit[] = [{ cdp: main, offset: { x: 0, y: 0 }, depth: 0 }];
    for (let visited = 0; queue.length; visited++) {
      const visit = queue.shift()!;
      if (visited >= MAX_FRAMES || visit.depth > MAX_FRAME_DEPTH) {
        if (visit.clip) boxes.push(visit.clip);
        continue;
      }
      const found = await find(visit, patterns).catch((err: unknown) => {
        // The main frame must be searched; a frame that cannot be (gone, not answering) is masked whole.
        if (!visit.clip) throw err;
        return undefined;
      });
      if (!found || found.whole) {
        if (visit.clip) boxes.push(visit.clip);
        else boxes.push({ x: -1e5, y: -1e5, width: 2e5, height: 2e5 });
        if (!found) continue;
      }
      for (const [x, y, width, height] of found.boxes) {
        const box = clipTo({ x: x + visit.offset.x, y: y + visit.offset.y, width, height }, visit.clip);
        if (box) boxes.push(box);
      }
      for (const [index, [x, y, width, height]] of found.frames.entries()) {
        const offset = { x: x + visit.offset.x, y: y + visit.offset.y };
        const clip = clipTo({ ...offset, width, height }, visit.clip);
        if (!clip) continue;
        const child = await childFrame(visit, index, children).catch(() => undefined);
        // A frame that cannot be reached is masked whole.
        if (child) queue.push({ ...child, offset, clip, depth: visit.depth + 1 });
        else boxes.push(clip);
      }
    }
    if (!boxes.length) return { masked: 0, remove: async () => undefined };
    const scroll = await main
      .send<{ cssVisualViewport: { pageX: number; pageY: number } }>('Page.getLayoutMetrics')
      .then((metrics) => metrics.cssVisualViewport);
    const inDocument = boxes.map((box) => ({ ...box, x: box.x + scroll.pageX, y: box.y + scroll.pageY }));
    const worlds = await frameWorlds(main);
    if (worlds.utility === undefined) throw new ServiceError('internal', 'The page has no world to draw the screenshot masks in.');
    const { result } = await main.send<{ result: { objectId?: string } }>('Runtime.callFunctionOn', {
      functionDeclaration: DRAW,
      arguments: [{ value: inDocument }, { value: MASK_COLOUR }, { value: OVERLAY_ATTRIBUTE }],
      executionContextId: worlds.utility,
    });
    const host = result.objectId;
    if (!host) throw new ServiceError('internal', 'The screenshot masks could not be drawn.');
    return { masked: boxes.length, remove: overlayRemover(main, host) };
  } finally {
    await children.detach();
  }
}

/** Runs FIND in the reader's world of a frame, once more in a fresh one if the document changed since it was found. */
async function find(visit: FrameVisit, patterns: string[][]): Promise<Found> {
  const once = async (fresh: boolean) => {
    const worlds = await frameWorlds(visit.cdp, visit.cdpFrameId, fresh);
    if (worlds.utility === undefined) throw new ServiceError('internal', 'No world to search the frame for secrets in.');
    const { result, exceptionDetails } = await visit.cdp.send<{ result: { value?: unknown }; exceptionDetails?: unknown }>(
      'Runtime.callFunctionOn',
      {
        functionDeclaration: FIND,
        arguments: [{ value: patterns }, { value: FRAMES_KEY }],
        executionContextId: worlds.utility,
        returnByValue: true,
      },
    );
    if (exceptionDetails || !result.value) throw new ServiceError('internal', 'The frame could not be searched for secrets.');
    return result.value as Found;
  };
  return once(false).catch((err: unknown) => {
    if (!isStaleWorld(err)) throw err;
    return once(true);
  });
}

/** The frame behind the `index`th iframe FIND saw in `parent`: in the same renderer, or in one of its own (OOPIF). */
async function childFrame(
  parent: FrameVisit,
  index: number,
  own: OwnSessions,
): Promise<Pick<FrameVisit, 'cdp' | 'cdpFrameId'> | undefined> {
  const worlds = await frameWorlds(parent.cdp, parent.cdpFrameId);
  if (worlds.utility === undefined) return undefined;
  const { result } = await parent.cdp.send<{ result: { objectId?: string } }>('Runtime.callFunctionOn', {
    functionDeclaration: 'function (key, i) { const kept = window[Symbol.for(key)]; return kept ? kept[i] : null; }',
    arguments: [{ value: FRAMES_KEY }, { value: index }],
    executionContextId: worlds.utility,
  });
  if (!result.objectId) return undefined;
  try {
    const { node } = await parent.cdp.send<{ node: { frameId?: string } }>('DOM.describeNode', { objectId: result.objectId });
    if (!node.frameId) return undefined;
    // In the same renderer, its worlds are listed on the parent's session; else it has a session of its own.
    const local = await frameWorlds(parent.cdp, node.frameId).catch(() => undefined);
    if (local?.utility !== undefined) return { cdp: parent.cdp, cdpFrameId: node.frameId };
    const elsewhere = await own.find(node.frameId);
    return elsewhere ? { cdp: elsewhere } : undefined;
  } finally {
    await parent.cdp.send('Runtime.releaseObject', { objectId: result.objectId }).catch(() => undefined);
  }
}

/** The CDP sessions of the page's frames that run in a renderer of their own, by their frame id; opened once asked for. */
class OwnSessions {
  private found: Promise<Map<string, Cdp>> | undefined;
  private readonly detachers: Array<() => Promise<void>> = [];

  constructor(
    private readonly session: Session,
    private readonly main: Cdp,
  ) {}

  async find(cdpFrameId: string): Promise<Cdp | undefined> {
    this.found ??= this.open();
    return (await this.found).get(cdpFrameId);
  }

  async detach(): Promise<void> {
    await Promise.all(this.detachers.map((detach) => detach()));
  }

  private async open(): Promise<Map<string, Cdp>> {
    const byId = new Map<string, Cdp>();
    const page = this.session.page;
    for (const frame of page.frames().slice(0, MAX_FRAMES)) {
      if (frame === page.mainFrame()) continue;
      const { cdp, detach } = await frameSession(frame, this.main, DEFAULT_CALL_TIMEOUT_MS).catch(() => ({
        cdp: undefined,
        detach: undefined,
      }));
      if (!cdp || !detach) continue;
      this.detachers.push(detach);
      const tree = await cdp.send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree').catch(() => undefined);
      if (tree) byId.set(tree.frameTree.frame.id, cdp);
    }
    return byId;
  }
}

function clipTo(box: Region, clip: Region | undefined): Region | undefined {
  if (!clip) return box.width > 0 && box.height > 0 ? box : undefined;
  const x = Math.max(box.x, clip.x);
  const y = Math.max(box.y, clip.y);
  const right = Math.min(box.x + box.width, clip.x + clip.width);
  const bottom = Math.min(box.y + box.height, clip.y + clip.height);
  return right > x && bottom > y ? { x, y, width: right - x, height: bottom - y } : undefined;
}

/**
 * In the reader's world of a frame: the viewport boxes to mask, and the content box of each iframe (the elements
 * kept under `key` for the caller). The text of every text node (but scripts and styles) and of open shadow roots is
 * joined and searched with each pattern, so a secret split over several nodes is found too, and each match masked
 * by the boxes of its ranges; a field is masked whole when its value matches, a password field whenever it is
 * filled. Over MAX_BOXES boxes, `whole`.
 */
const FIND = `function (patterns, key) {
  const res = patterns.map((p) => new RegExp(p[0], p[1]));
  const PAD = 2, MAX_BOXES = 2000;
  const boxes = [], frames = [], frameEls = [];
  let whole = false;
  const push = (r) => {
    if (r.width <= 0 || r.height <= 0) return;
    if (boxes.length >= MAX_BOXES) { whole = true; return; }
    boxes.push([r.left - PAD, r.top - PAD, r.width + 2 * PAD, r.height + 2 * PAD]);
  };
  const matches = (text) => res.some((re) => { re.lastIndex = 0; return re.test(text); });
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const texts = [];
  const parts = [];
  let length = 0;
  const roots = [document];
  const show = NodeFilter.SHOW_ELEMENT | (res.length ? NodeFilter.SHOW_TEXT : 0);
  for (let i = 0; i < roots.length; i++) {
    const walker = document.createTreeWalker(roots[i], show);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.nodeType === 3) {
        const parent = n.parentNode;
        if (parent && SKIP.has(parent.nodeName)) continue;
        texts.push([n, length]);
        parts.push(n.data);
        length += n.data.length;
        continue;
      }
      const el = n;
      if (el.shadowRoot) roots.push(el.shadowRoot);
      const tag = el.localName;
      if (tag === 'input') {
        if (el.type === 'password') { if (el.value) push(el.getBoundingClientRect()); }
        else if (el.type !== 'hidden' && res.length && el.value && matches(el.value)) push(el.getBoundingClientRect());
      } else if (tag === 'textarea') {
        if (res.length && el.value && matches(el.value)) push(el.getBoundingClientRect());
      } else if (tag === 'select') {
        if (res.length && matches(Array.from(el.selectedOptions || []).map((o) => o.label).join(' '))) push(el.getBoundingClientRect());
      } else if (tag === 'iframe' || tag === 'frame') {
        const r = el.getBoundingClientRect();
        const s = getComputedStyle(el);
        const pl = parseFloat(s.paddingLeft) || 0, pt = parseFloat(s.paddingTop) || 0;
        const pr = parseFloat(s.paddingRight) || 0, pb = parseFloat(s.paddingBottom) || 0;
        frames.push([r.left + el.clientLeft + pl, r.top + el.clientTop + pt, el.clientWidth - pl - pr, el.clientHeight - pt - pb]);
        frameEls.push(el);
      }
    }
  }
  window[Symbol.for(key)] = frameEls;
  if (res.length && texts.length) {
    const all = parts.join('');
    const range = document.createRange();
    for (const re of res) {
      re.lastIndex = 0;
      for (let m = re.exec(all); m && !whole; m = re.exec(all)) {
        const start = m.index, end = start + m[0].length;
        let lo = 0, hi = texts.length - 1;
        while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (texts[mid][1] <= start) lo = mid; else hi = mid - 1; }
        for (let t = lo; t < texts.length && texts[t][1] < end; t++) {
          const node = texts[t][0], at = texts[t][1];
          range.setStart(node, Math.max(0, start - at));
          range.setEnd(node, Math.min(node.data.length, end - at));
          for (const r of range.getClientRects()) push(r);
        }
      }
    }
  }
  return { boxes, frames, whole };
}`;

/**
 * In the reader's world of the main frame: the masks, opaque boxes at document coordinates, on a host with every style
 * inline and `!important` and the boxes in a closed shadow root (the page's CSS cannot restyle them), put in the top
 * layer as a popover so that a modal dialog or another popover cannot cover them, and marked so that the settle
 * tracker takes its coming and going for no change of the page. Answers the host.
 */
const DRAW = `function (boxes, colour, marker) {
  const host = document.createElement('div');
  host.style.cssText = ('all: initial; position: absolute; left: 0; top: 0; width: 0; height: 0; margin: 0; padding: 0; border: 0; ' +
    'overflow: visible; z-index: 2147483647; pointer-events: none; display: block; background: transparent; contain: layout style;').replace(/;/g, ' !important;');
  const root = host.attachShadow({ mode: 'closed' });
  const layer = document.createElement('div');
  layer.style.cssText = 'all: initial; position: absolute; left: 0; top: 0;';
  root.appendChild(layer);
  for (const b of boxes) {
    const box = document.createElement('div');
    box.style.cssText = 'all: initial; position: absolute; left: ' + b.x + 'px; top: ' + b.y + 'px; width: ' + b.width + 'px; height: ' +
      b.height + 'px; background: ' + colour + ';';
    layer.appendChild(box);
  }
  host.setAttribute('popover', 'manual');
  host.setAttribute(marker, '');
  document.documentElement.appendChild(host);
  try { host.showPopover(); } catch (e) { /* no top layer here: z-index alone */ }
  const at = host.getBoundingClientRect();
  layer.style.left = -(at.left + scrollX) + 'px';
  layer.style.top = -(at.top + scrollY) + 'px';
  return host;
}`;
