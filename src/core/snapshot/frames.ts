import type { Frame } from 'playwright-core';
import { ServiceError, throwIfAborted } from '../errors.js';
import type { Session } from '../sessions.js';
import { bounded, frameSession, type Cdp } from '../page/cdp.js';
import { elementObject, FRAME_ATTRIBUTE, readFrame, releaseObjects, type FrameRead } from './read.js';
import { refNumbers } from './refs.js';
import { MAX_CLOSED_ROOTS, MAX_PAGE_ELEMENTS } from './size.js';
import { Renderer, type FrameSlot, type RenderedRef } from './render.js';
import type { PageNode } from './tree.js';
import { WALKER_STATE_KEY } from './walker.js';

/** Most frames one page text reads (nested ones included); the others are one line each. */
export const MAX_FRAMES = 50;
/** Deepest frame one page text reads (a frame of the page is level 1); deeper ones are one line each. */
export const MAX_FRAME_DEPTH = 10;
/**
 * An iframe at least this share of the viewport's width and of its height holds the page's main content, when the
 * page itself has fewer than MAX_MAIN_PAGE_CHARACTERS of text.
 */
const MAIN_CONTENT_SHARE = 0.5;
const MAX_MAIN_PAGE_CHARACTERS = 1_000;

/** The characters of text in a read's tree, counted up to `stop`. */
function wordsOf(node: PageNode, stop: number): number {
  let count = node.role === 'StaticText' ? node.name.trim().length : 0;
  for (const kid of node.children) {
    if (count >= stop) break;
    count += wordsOf(kid, stop - count);
  }
  return count;
}

export interface FrameRefs {
  frameId: string;
  refs: Map<string, RenderedRef>;
  read: FrameRead;
}

/** Marks each iframe element with its session frame id, so an iframe the reader meets maps to its Frame. */
export async function stampFrames(session: Session, timeoutMs: number): Promise<void> {
  const children = session.page.frames().filter((frame) => frame.parentFrame() && !frame.isDetached());
  await Promise.all(
    children.map(async (frame) => {
      const id = session.frameId(frame);
      const element = await bounded(frame.frameElement(), timeoutMs, 'finding an iframe').catch(() => undefined);
      if (!element) return;
      await bounded(
        element.evaluate((el, [attr, value]) => (el as Element).setAttribute(attr!, value!), [FRAME_ATTRIBUTE, id]),
        timeoutMs,
        'marking an iframe',
      ).catch(() => undefined);
      await element.dispose().catch(() => undefined);
    }),
  );
}

/**
 * Whether an iframe of the read holds the page's main content: one at least half the viewport wide and half as high
 * (an app shown in a frame, a checkout overlay) on a page with few words of its own, not an ad, a video or a form
 * widget beside the page's own content.
 */
export async function framesHoldMainContent(cdp: Cdp, read: FrameRead): Promise<boolean> {
  const ids: number[] = [];
  const collect = (node: PageNode) => {
    if (node.role === 'Iframe' && node.elementId !== undefined) ids.push(node.elementId);
    for (const kid of node.children) collect(kid);
  };
  collect(read.root);
  // A page with words of its own (an article with an embedded video, a page with an ad slot) is read as it is.
  if (!ids.length || wordsOf(read.root, MAX_MAIN_PAGE_CHARACTERS) >= MAX_MAIN_PAGE_CHARACTERS) return false;
  // The check never costs the page text: a document gone meanwhile is a page without frames to read.
  const asked = await cdp
    .send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      functionDeclaration: `function (stateKey, ids, share) {
        const state = window[Symbol.for(stateKey)];
        return ids.some((id) => {
          const box = state?.nodes.get(id)?.deref()?.getBoundingClientRect();
          return !!box && box.width >= share * innerWidth && box.height >= share * innerHeight;
        });
      }`,
      executionContextId: read.worlds.utility,
      arguments: [{ value: WALKER_STATE_KEY }, { value: ids }, { value: MAIN_CONTENT_SHARE }],
      returnByValue: true,
    })
    .catch((err: unknown) => {
      if (err instanceof ServiceError) throw err;
      return undefined;
    });
  return asked?.result.value === true;
}

/** A read frame's place to fill, and how it was reached. */
interface Parent {
  read: FrameRead;
  /** The CDP session the frame was read through. */
  cdp: Cdp;
  /** How deep the frame is: the page is 0. */
  level: number;
  /** Whether the stamps the read found may name the wrong frames (the page copied a stamped iframe element). */
  stale?: boolean;
}

/**
 * Fills the iframe slots of the main frame's lines with the frames' content, nested frames too; answers the refs found
 * inside. At most MAX_FRAMES frames, MAX_FRAME_DEPTH deep, and one frame that does not answer stops the rest.
 */
export async function readFrames(
  session: Session,
  main: { cdp: Cdp; read: FrameRead; lines: Array<string | FrameSlot> },
  call: { timeoutMs: number; signal?: AbortSignal },
): Promise<FrameRefs[]> {
  const reader = new FramesReader(session, main.cdp, call.timeoutMs, call.signal);
  await reader.fill(main.lines.filter(isSlot), { read: main.read, cdp: main.cdp, level: 0 });
  return reader.out;
}

class FramesReader {
  readonly out: FrameRefs[] = [];
  /** Whether the frames were stamped again during this read (once: for frames made after the stamp). */
  private restamped = false;
  /** Set when a frame did not answer: the frames after it are not read, so one stuck frame costs one timeout. */
  private stopped?: string;

  constructor(
    private readonly session: Session,
    /** The page's own CDP session: a frame read through it lives in the page's process. */
    private readonly main: Cdp,
    private readonly timeoutMs: number,
    private readonly signal?: AbortSignal,
  ) {}

  async fill(slots: FrameSlot[], parent: Parent): Promise<void> {
    const stamps = [...parent.read.frameStamps.values()];
    // A copy of a stamped iframe element carries the stamp of the original's frame: the read's stamps are not trusted.
    if (new Set(stamps).size < stamps.length) {
      await this.restamp();
      parent = { ...parent, stale: true };
    }
    for (const slot of slots) {
      throwIfAborted(this.signal);
      if (this.stopped) note(slot, this.stopped);
      else if (parent.level >= MAX_FRAME_DEPTH)
        note(slot, `frame not read: the page text reads frames nested at most ${MAX_FRAME_DEPTH} deep`);
      else if (this.out.length >= MAX_FRAMES) note(slot, `frame not read: the page text reads at most ${MAX_FRAMES} frames`);
      else await this.fillOne(slot, parent);
    }
  }

  private async fillOne(slot: FrameSlot, parent: Parent): Promise<void> {
    const found = await this.locate(parent, slot.elementId);
    if (!found) return note(slot, 'frame not loaded');
    const { cdp, detach } = await frameSession(found.frame, parent.cdp, this.timeoutMs);
    try {
      const read = await this.readOrNote(slot, cdp, found.cdpFrameId);
      if (!read) return;
      const frameId = this.session.frameId(found.frame);
      const renderer = new Renderer(`${frameId}-`, true, refNumbers(this.session, frameId, read), read.hidden);
      renderer.render(read.root, slot.depth);
      if (renderer.lines.length) slot.lines.push(...renderer.lines);
      else note(slot, 'empty frame');
      this.out.push({ frameId, refs: renderer.refs, read });
      await this.fill(renderer.lines.filter(isSlot), { read, cdp, level: parent.level + 1 });
    } finally {
      await detach?.();
    }
  }

  /** A frame's read; undefined, with a line in its slot saying why, when the frame could not be read. */
  private async readOrNote(slot: FrameSlot, cdp: Cdp, cdpFrameId: string): Promise<FrameRead | undefined> {
    try {
      return await readFrame(cdp, cdpFrameId);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'page_too_large') {
        const { elements, closedRoots } = err.details as { elements: number; closedRoots?: number };
        note(
          slot,
          closedRoots === undefined
            ? `frame not read: ${elements} elements, over the limit of ${MAX_PAGE_ELEMENTS}`
            : `frame not read: ${closedRoots} closed shadow roots, over the limit of ${MAX_CLOSED_ROOTS}`,
        );
      } else if (err instanceof ServiceError && err.code === 'timeout' && cdp.session !== this.main.session) {
        // A frame of another process (an ad, a widget) that hangs costs its own content, not the page's; one in the
        // page's process is the page not answering, and the whole read fails.
        note(slot, `frame not read: it did not answer within ${this.timeoutMs} ms`);
        this.stopped = 'frame not read: an earlier frame did not answer';
      } else if (err instanceof ServiceError) {
        throw err;
      } else {
        // Its document went while it was read (a navigation, the frame removed).
        note(slot, 'frame not read: it changed while it was read; read the page again');
      }
      return undefined;
    }
  }

  /**
   * The Frame in the iframe element `elementId` of the parent's read, and CDP's id of it. The element's stamp names the
   * Frame; an element without one, or with the stamp of a frame that has gone (a frame made or replaced after the stamp,
   * or none stamped before the read), has the page's frames stamped again.
   */
  private async locate(parent: Parent, elementId: number): Promise<{ frame: Frame; cdpFrameId: string } | undefined> {
    const { cdp, read } = parent;
    try {
      const objectId = await elementObject(cdp, read.worlds.utility!, elementId);
      if (!objectId) return undefined;
      const { node } = await cdp.send<{ node: { frameId?: string } }>('DOM.describeNode', { objectId });
      if (!node.frameId) return undefined;
      let frame = this.frame((parent.stale ? undefined : read.frameStamps.get(elementId)) ?? (await stampOf(cdp, objectId)));
      if (!frame && (await this.restamp())) frame = this.frame(await stampOf(cdp, objectId));
      return frame && { frame, cdpFrameId: node.frameId };
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      return undefined;
    } finally {
      await releaseObjects(cdp);
    }
  }

  /** Stamps the page's frames again, once per page text; whether it did now. */
  private async restamp(): Promise<boolean> {
    if (this.restamped) return false;
    this.restamped = true;
    await stampFrames(this.session, this.timeoutMs);
    return true;
  }

  private frame(id: string | undefined): Frame | undefined {
    if (id === undefined) return undefined;
    try {
      return this.session.frame(id);
    } catch {
      return undefined;
    }
  }
}

/** A line in an iframe's place saying why its content is not there. */
function note(slot: FrameSlot, what: string): void {
  slot.lines.push(`${' '.repeat(slot.depth)}(${what})`);
}

/** The stamp an iframe element carries now. */
async function stampOf(cdp: Cdp, objectId: string): Promise<string | undefined> {
  const stamp = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
    functionDeclaration: 'function (attribute) { return this.getAttribute(attribute); }',
    objectId,
    arguments: [{ value: FRAME_ATTRIBUTE }],
    returnByValue: true,
  });
  return typeof stamp.result.value === 'string' ? stamp.result.value : undefined;
}

export function isSlot(line: string | FrameSlot): line is FrameSlot {
  return typeof line !== 'string';
}

/** Flattens rendered lines, splicing each frame's content in place of its slot. */
export function flatten(lines: Array<string | FrameSlot>, out: string[] = []): string[] {
  for (const line of lines) {
    if (typeof line === 'string') out.push(line);
    else flatten(line.lines, out);
  }
  return out;
}
