import type { Frame } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { OperationContext } from '../operation.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, bounded, frameSession, pageSession, type Cdp } from '../page/cdp.js';
import { takeSnapshot } from '../snapshot/index.js';
import { lastRead } from '../snapshot/last-read.js';
import { frameWorlds, isStaleWorld } from '../snapshot/read.js';
import { REFS, type RefTarget } from '../snapshot/refs.js';
import { WALKER_STATE_KEY } from '../snapshot/walker.js';

/** A rectangle in CSS pixels of the main document (what Page.captureScreenshot's clip takes). */
export interface Region {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A ref's label as drawn: its text and box, document CSS px. */
export interface Label extends Region {
  text: string;
}

/** Label font size at scale 1, CSS px; a scaled-down shot (a full page) gets bigger labels, so they stay legible. */
const LABEL_FONT_PX = 12;
const MAX_LABEL_FONT_PX = 48;
/** Tries to move a label clear of those already placed before it is left overlapping. */
const PLACE_TRIES = 8;
const LABEL_COLOUR = '#c8006a';

/** The refs of a fresh read of the page, as printed (`12`, or `0-12` and `1-3` with iframes), and what they stand for. */
export async function readRefs(session: Session, ctx: OperationContext): Promise<RefTarget[]> {
  // Read as the latest whole read was (with or without iframes): the labels are the refs the page text shows.
  const snapshot = await takeSnapshot(session, { iframes: lastRead(session)?.iframes ?? false }, ctx);
  const table = session.state.get(REFS);
  return [...snapshot.refs.keys()].map((ref) => table.get(ref)).filter((target): target is RefTarget => target !== undefined);
}

/**
 * Draws each ref whose element shows in `region` (a label at its top-left and a thin outline) in an overlay over the
 * page: a host element with a closed shadow root (the page's CSS cannot restyle it), made in the reader's world and
 * appended to `<html>`, outside `<body>`. Answers how many were drawn and how to take the overlay away again.
 */
export async function drawRefs(
  session: Session,
  targets: RefTarget[],
  { region, scale }: { region: Region; scale: number },
): Promise<{ drawn: number; remove: () => Promise<void> }> {
  const cdp = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
  const boxes = await refBoxes(session, cdp, targets);
  const shown = boxes.flatMap(({ text, box }) => {
    const inShot = intersect(box, region);
    return inShot ? [{ text, box: inShot }] : [];
  });
  if (!shown.length) return { drawn: 0, remove: async () => undefined };
  const fontPx = Math.min(MAX_LABEL_FONT_PX, Math.round(LABEL_FONT_PX / Math.max(scale, 0.01)));
  const labels = placeLabels(
    shown.map(({ text, box }) => ({ text, x: box.x, y: box.y })),
    fontPx,
    region,
  );
  const { objectId: host } = await inReaderWorld(cdp, undefined, {
    functionDeclaration: DRAW,
    arguments: [
      { value: shown.map(({ box }) => box) },
      { value: labels },
      { value: { fontPx, line: Math.max(1, Math.round(1 / scale)), colour: LABEL_COLOUR } },
    ],
  });
  if (!host) return { drawn: 0, remove: async () => undefined };
  return { drawn: labels.length, remove: overlayRemover(cdp, host) };
}

/** Takes an overlay drawn in a page (its host element, held as `objectId`) out again, and lets go of the handle. */
export function overlayRemover(cdp: Cdp, objectId: string): () => Promise<void> {
  return async () => {
    await cdp.send('Runtime.callFunctionOn', { functionDeclaration: 'function () { this.remove(); }', objectId }).catch(() => undefined);
    await cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
  };
}

/**
 * Labels at their refs' top-left corners, inside `bounds`: just above the corner, where the label covers nothing of its
 * own element (an icon stays visible), else just inside it (at the shot's edge, or where the spot above is taken). One
 * that would still cover a label placed before moves right of it, or below it at the edge, up to PLACE_TRIES times.
 */
export function placeLabels(anchors: Array<{ text: string; x: number; y: number }>, fontPx: number, bounds: Region): Label[] {
  const height = Math.round(fontPx * 1.3);
  const placed: Label[] = [];
  const sorted = [...anchors].sort((a, b) => a.y - b.y || a.x - b.x);
  for (const { text, x: ax, y: ay } of sorted) {
    const width = Math.round(text.length * fontPx * 0.62 + fontPx * 0.6);
    const fit = (x: number, y: number) => ({
      x: Math.max(bounds.x, Math.min(x, bounds.x + bounds.width - width)),
      y: Math.max(bounds.y, Math.min(y, bounds.y + bounds.height - height)),
    });
    const clash = (at: { x: number; y: number }) => placed.find((other) => overlaps(other, { ...at, width, height }));
    const above = fit(ax, ay - height);
    let at = above.y === ay - height && !clash(above) ? above : fit(ax, ay);
    for (let tries = 0; tries < PLACE_TRIES; tries++) {
      const hit = clash(at);
      if (!hit) break;
      const right = hit.x + hit.width + 1;
      at = right + width <= bounds.x + bounds.width ? fit(right, at.y) : fit(ax, hit.y + hit.height + 1);
    }
    placed.push({ text, ...at, width, height });
  }
  return placed;
}

function overlaps(a: Region, b: Region): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function intersect(a: Region, b: Region): Region | undefined {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const right = Math.min(a.x + a.width, b.x + b.width);
  const bottom = Math.min(a.y + a.height, b.y + b.height);
  return right - x >= 1 && bottom - y >= 1 ? { x, y, width: right - x, height: bottom - y } : undefined;
}

/** Each shown ref's box in main-document CSS px, measured frame by frame in the reader's world. */
async function refBoxes(session: Session, main: Cdp, targets: RefTarget[]): Promise<Array<{ text: string; box: Region }>> {
  const byFrame = new Map<string, RefTarget[]>();
  for (const target of targets) {
    const inFrame = byFrame.get(target.frameId);
    if (inFrame) inFrame.push(target);
    else byFrame.set(target.frameId, [target]);
  }
  const measured = await Promise.all(
    [...byFrame].map(async ([frameId, inFrame]) => {
      const frame = liveFrame(session, frameId);
      if (!frame) return [];
      const top = frame === session.page.mainFrame();
      const offset = top ? { x: 0, y: 0 } : await contentOffset(frame);
      if (!offset) return [];
      const { cdp, detach } = top ? { cdp: main, detach: undefined } : await frameSession(frame, main, DEFAULT_CALL_TIMEOUT_MS);
      try {
        const found = await measureFrame(cdp, inFrame, !top);
        if (!found) return [];
        // The main frame's boxes are in its viewport: the scroll puts them in the document; a frame's are offset by
        // where its content shows in the main viewport, and the main document's scroll.
        return found.boxes.map(([text, x, y, width, height]) => ({ text, box: { x: x + offset.x, y: y + offset.y, width, height } }));
      } finally {
        await detach?.();
      }
    }),
  );
  const scroll = await main
    .send<{ cssVisualViewport: { pageX: number; pageY: number } }>('Page.getLayoutMetrics')
    .then((metrics) => metrics.cssVisualViewport);
  return measured.flat().map(({ text, box }) => ({ text, box: { ...box, x: box.x + scroll.pageX, y: box.y + scroll.pageY } }));
}

/** Where a child frame's content box starts in the main frame's viewport; undefined when the frame is not shown. */
async function contentOffset(frame: Frame): Promise<{ x: number; y: number } | undefined> {
  const element = await bounded(frame.frameElement(), DEFAULT_CALL_TIMEOUT_MS, 'finding an iframe').catch(() => undefined);
  if (!element) return undefined;
  try {
    const box = await element.boundingBox();
    if (!box) return undefined;
    const inset = await element.evaluate((node) => {
      const el = node as Element;
      const style = getComputedStyle(el);
      return { x: el.clientLeft + parseFloat(style.paddingLeft), y: el.clientTop + parseFloat(style.paddingTop) };
    });
    return { x: box.x + inset.x, y: box.y + inset.y };
  } catch {
    return undefined;
  } finally {
    await element.dispose().catch(() => undefined);
  }
}

function liveFrame(session: Session, frameId: string): Frame | undefined {
  try {
    return session.frame(frameId);
  } catch {
    return undefined;
  }
}

type MeasuredBox = [text: string, x: number, y: number, width: number, height: number];

/** The frame's refs that show: on screen in the frame, not hidden, and not covered by another element where seen. */
async function measureFrame(cdp: Cdp, targets: RefTarget[], clipToFrame: boolean): Promise<{ boxes: MeasuredBox[] } | undefined> {
  const { cdpFrameId, document } = targets[0]!;
  const result = await inReaderWorld(cdp, cdpFrameId, {
    functionDeclaration: MEASURE,
    arguments: [
      { value: WALKER_STATE_KEY },
      { value: document },
      { value: targets.map((target) => [target.ref, target.elementId]) },
      { value: clipToFrame },
    ],
    returnByValue: true,
  }).catch((err: unknown) => {
    // A frame that went meanwhile shows nothing; a page that does not answer fails the shot.
    if (err instanceof ServiceError) throw err;
    return undefined;
  });
  return (result?.value as { boxes: MeasuredBox[] } | null) ?? undefined;
}

/** Calls a function in the reader's world of a frame (the top frame when undefined), once more if that world has gone. */
async function inReaderWorld(cdp: Cdp, cdpFrameId: string | undefined, call: object): Promise<{ value?: unknown; objectId?: string }> {
  const once = async (fresh: boolean) => {
    const worlds = await frameWorlds(cdp, cdpFrameId, fresh);
    if (worlds.utility === undefined) return {};
    const { result } = await cdp.send<{ result: { value?: unknown; objectId?: string } }>('Runtime.callFunctionOn', {
      ...call,
      executionContextId: worlds.utility,
    });
    return result;
  };
  return once(false).catch((err: unknown) => {
    if (!isStaleWorld(err)) throw err;
    return once(true);
  });
}

/**
 * In the reader's world of a frame: the viewport box of each `[ref, elementId]` of the latest read that shows. An
 * element shows when it has an area, is visible (visibility, opacity), lies in the part its scrolling or clipping
 * ancestors show, and where its middle is in the viewport, what is drawn there is the element, inside it, or around it
 * (an overlay that takes the clicks covers it). A frame's elements are clipped to its viewport (`clip`); the main
 * frame's are not (a full page shows what lies below the viewport).
 */
const MEASURE = `function (stateKey, doc, items, clip) {
  const state = window[Symbol.for(stateKey)];
  if (!state || state.doc !== doc) return null;
  const vw = document.documentElement.clientWidth || innerWidth, vh = document.documentElement.clientHeight || innerHeight;
  const styles = new Map();
  const styleOf = (el) => { let s = styles.get(el); if (!s) styles.set(el, (s = getComputedStyle(el))); return s; };
  const up = (el) => el.assignedSlot || el.parentElement || (el.parentNode && el.parentNode.host) || null;
  const boxes = [];
  for (const [ref, id] of items) {
    const el = state.nodes.get(id)?.deref();
    if (!el || !el.isConnected) continue;
    if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    let left = r.left, top = r.top, right = r.right, bottom = r.bottom;
    if (clip) { left = Math.max(left, 0); top = Math.max(top, 0); right = Math.min(right, vw); bottom = Math.min(bottom, vh); }
    // A scrolling list shows only some of its rows: each clipping ancestor up to <body> cuts the box (none past a fixed one).
    for (let at = el, fixed = styleOf(el).position === 'fixed'; !fixed && (at = up(at)) && at !== document.body && at !== document.documentElement; ) {
      const s = styleOf(at);
      if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
        const c = at.getBoundingClientRect();
        left = Math.max(left, c.left); top = Math.max(top, c.top); right = Math.min(right, c.right); bottom = Math.min(bottom, c.bottom);
      }
      fixed = s.position === 'fixed';
    }
    if (right - left < 1 || bottom - top < 1) continue;
    const x = (Math.max(left, 0) + Math.min(right, vw)) / 2, y = (Math.max(top, 0) + Math.min(bottom, vh)) / 2;
    if (x > 0 && y > 0 && x < vw && y < vh) {
      const root = el.getRootNode();
      const hit = (typeof root.elementFromPoint === 'function' ? root : document).elementFromPoint(x, y);
      if (hit && hit !== el && !el.contains(hit) && !hit.contains(el)) continue;
    }
    boxes.push([ref, left, top, right - left, bottom - top]);
  }
  return { boxes };
}`;

/**
 * In the reader's world of the main frame: the overlay. Built whole before it is appended (a throw leaves nothing
 * behind); every style inline and `!important` on the host, the labels in a closed shadow root with `all: initial`.
 * Answers the host, which the caller removes after the shot.
 */
const DRAW = `function (boxes, labels, look) {
  const host = document.createElement('div');
  const important = (style) => style.replace(/;/g, ' !important;');
  host.style.cssText = important('all: initial; position: absolute; left: 0; top: 0; width: 0; height: 0; overflow: visible; ' +
    'z-index: 2147483647; pointer-events: none; display: block; contain: layout style;');
  const root = host.attachShadow({ mode: 'closed' });
  const layer = document.createElement('div');
  layer.style.cssText = 'all: initial; position: absolute; left: 0; top: 0;';
  root.appendChild(layer);
  for (const b of boxes) {
    const outline = document.createElement('div');
    outline.style.cssText = 'all: initial; position: absolute; box-sizing: border-box; left: ' + b.x + 'px; top: ' + b.y + 'px; width: ' +
      b.width + 'px; height: ' + b.height + 'px; border: ' + look.line + 'px solid ' + look.colour + ';';
    layer.appendChild(outline);
  }
  for (const l of labels) {
    const label = document.createElement('div');
    label.textContent = l.text;
    label.style.cssText = 'all: initial; position: absolute; box-sizing: border-box; left: ' + l.x + 'px; top: ' + l.y + 'px; width: ' +
      l.width + 'px; height: ' + l.height + 'px; background: ' + look.colour + '; color: #fff; font: bold ' + look.fontPx + 'px/' +
      l.height + 'px monospace; text-align: center; white-space: nowrap; border-radius: 2px; box-shadow: 0 0 0 ' + look.line + 'px #fff;';
    layer.appendChild(label);
  }
  document.documentElement.appendChild(host);
  // The host sits where the page's layout puts an absolute box at 0,0 (the <html> box may be positioned): offset the
  // layer so its coordinates are the document's.
  const at = host.getBoundingClientRect();
  layer.style.left = -(at.left + scrollX) + 'px';
  layer.style.top = -(at.top + scrollY) + 'px';
  return host;
}`;
