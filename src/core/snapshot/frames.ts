import type { Frame } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { bounded, frameSession, type Cdp } from '../page/cdp.js';
import { elementObject, FRAME_ATTRIBUTE, readFrame, releaseObjects, type FrameRead } from './read.js';
import { refNumbers } from './refs.js';
import { MAX_PAGE_ELEMENTS } from './size.js';
import { Renderer, type FrameSlot, type RenderedRef } from './render.js';

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

/** Fills the iframe slots of a rendered frame with their content, recursively; returns the refs found inside. */
export async function fillFrameSlots(
  session: Session,
  slots: FrameSlot[],
  parentRead: FrameRead,
  parent: Cdp,
  timeoutMs: number,
  out: FrameRefs[],
): Promise<void> {
  for (const slot of slots) {
    const stamp = parentRead.frameStamps.get(slot.elementId);
    const frame = stamp === undefined ? undefined : findFrame(session, stamp);
    const cdpFrameId = frame ? await contentFrameId(parent, parentRead, slot.elementId) : undefined;
    if (!frame || !cdpFrameId) {
      slot.lines.push(`${' '.repeat(slot.depth)}(frame not loaded)`);
      continue;
    }
    const { cdp, detach } = await frameSession(frame, parent, timeoutMs);
    try {
      let read: FrameRead;
      try {
        read = await readFrame(cdp, cdpFrameId);
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code !== 'page_too_large') throw err;
        const { elements } = err.details as { elements: number };
        slot.lines.push(`${' '.repeat(slot.depth)}(frame not read: ${elements} elements, over the limit of ${MAX_PAGE_ELEMENTS})`);
        continue;
      }
      const frameId = session.frameId(frame);
      const renderer = new Renderer(`${frameId}-`, true, refNumbers(session, frameId, read), read.hidden);
      slot.lines.push(...renderer.render(read.root, slot.depth));
      out.push({ frameId, refs: renderer.refs, read });
      await fillFrameSlots(session, renderer.lines.filter(isSlot), read, cdp, timeoutMs, out);
    } finally {
      await detach?.();
    }
  }
}

/** CDP's id of the frame inside an iframe element of the latest read. */
async function contentFrameId(cdp: Cdp, read: FrameRead, elementId: number): Promise<string | undefined> {
  try {
    const objectId = await elementObject(cdp, read.worlds.utility!, elementId);
    if (!objectId) return undefined;
    const { node } = await cdp.send<{ node: { frameId?: string } }>('DOM.describeNode', { objectId });
    return node.frameId;
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    return undefined;
  } finally {
    await releaseObjects(cdp);
  }
}

function findFrame(session: Session, id: string): Frame | undefined {
  try {
    return session.frame(id);
  } catch {
    return undefined;
  }
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
