import type { Frame } from 'playwright-core';
import type { Session } from '../sessions.js';
import { fetchAXTree } from './ax.js';
import { bounded, frameSession, type Cdp } from './cdp.js';
import { readHiddenText } from './hidden.js';
import { refNumbers } from './refs.js';
import { countElements, MAX_PAGE_ELEMENTS } from './size.js';
import { Renderer, type FrameSlot, type RenderedRef } from './render.js';

const FRAME_ATTRIBUTE = 'data-bsm-frame';

export interface FrameRefs {
  frameId: string;
  refs: Map<string, RenderedRef>;
}

/** Marks each iframe element with its session frame id, so an iframe met in the accessibility tree maps to its Frame. */
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
  parent: Cdp,
  timeoutMs: number,
  out: FrameRefs[],
): Promise<void> {
  for (const slot of slots) {
    const described = await parent
      .send<{ node: { frameId?: string; attributes?: string[] } }>('DOM.describeNode', { backendNodeId: slot.backendNodeId })
      .catch(() => undefined);
    const cdpFrameId = described?.node.frameId;
    const attrs = described?.node.attributes ?? [];
    const stamp = attrs[attrs.indexOf(FRAME_ATTRIBUTE) + 1];
    const frame = stamp !== undefined && attrs.includes(FRAME_ATTRIBUTE) ? findFrame(session, stamp) : undefined;
    if (!frame || !cdpFrameId) {
      slot.lines.push(`${' '.repeat(slot.depth)}(frame not loaded)`);
      continue;
    }
    const { cdp, detach } = await frameSession(frame, parent, cdpFrameId, timeoutMs);
    try {
      // A same-process frame was counted with its page; a frame in its own process is counted here.
      const elements = cdp.frameId === undefined ? await countElements(cdp) : 0;
      if (elements > MAX_PAGE_ELEMENTS) {
        slot.lines.push(`${' '.repeat(slot.depth)}(frame not read: ${elements} elements, over the limit of ${MAX_PAGE_ELEMENTS})`);
        continue;
      }
      const tree = await fetchAXTree(cdp);
      const frameId = session.frameId(frame);
      const renderer = new Renderer(tree, `${frameId}-`, true, refNumbers(session, frameId, tree), await readHiddenText(cdp, tree));
      slot.lines.push(...renderer.render(tree.root, slot.depth));
      out.push({ frameId, refs: renderer.refs });
      await fillFrameSlots(session, renderer.lines.filter(isSlot), cdp, timeoutMs, out);
    } finally {
      await detach?.();
    }
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
