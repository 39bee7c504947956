import { ServiceError } from '../errors.js';
import type { AXNode, AXTree } from './ax.js';
import type { Cdp } from './cdp.js';

/**
 * Text that is on screen but inside `aria-hidden="true"` (a headline ribbon, MathJax's visual rendering). The
 * accessibility tree holds such a subtree without its text, so the text is read from the DOM: one `innerText` per
 * outermost hidden element that has content in the tree, and only when it is rendered. A hidden element holding
 * only text (decorative stars, an icon glyph) has no node in the tree and stays out.
 */
const HIDDEN_REASONS = new Set(['ariaHiddenElement', 'ariaHiddenSubtree']);
/** Hidden regions read per frame; a page with more shows the first ones in document order. */
const MAX_HIDDEN_REGIONS = 100;
const OBJECT_GROUP = 'bsm-hidden-text';

/** What an aria-hidden region shows, and whether it is a block of its own (not inline in the text around it). */
export interface HiddenText {
  text: string;
  block: boolean;
}

function isAriaHidden(node: AXNode): boolean {
  return node.ignored && (node.ignoredReasons ?? []).some((reason) => HIDDEN_REASONS.has(reason.name));
}

/** The DOM nodes of the outermost aria-hidden nodes with something inside, in tree order. */
function hiddenRoots(tree: AXTree): number[] {
  const roots: number[] = [];
  const walk = (node: AXNode, parentHidden: boolean) => {
    if (roots.length >= MAX_HIDDEN_REGIONS) return;
    const hidden = isAriaHidden(node);
    if (hidden && !parentHidden) {
      if (node.backendDOMNodeId !== undefined && node.childIds?.length) roots.push(node.backendDOMNodeId);
      return;
    }
    for (const id of node.childIds ?? []) {
      const kid = tree.nodes.get(id);
      if (kid) walk(kid, hidden);
    }
  };
  walk(tree.root, false);
  return roots;
}

/** Rendered text of the page's aria-hidden regions, by backend DOM node id; empty when there are none. */
export async function readHiddenText(cdp: Cdp, tree: AXTree): Promise<Map<number, HiddenText>> {
  const texts = new Map<number, HiddenText>();
  const roots = hiddenRoots(tree);
  if (roots.length === 0) return texts;
  try {
    const resolved = await Promise.all(
      roots.map((backendNodeId) =>
        cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', { backendNodeId, objectGroup: OBJECT_GROUP }).then(
          (found) => found.object.objectId,
          () => undefined,
        ),
      ),
    );
    const found = roots.flatMap((backendNodeId, i) => (resolved[i] ? [{ backendNodeId, objectId: resolved[i]! }] : []));
    if (found.length === 0) return texts;
    const { result } = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      objectId: found[0]!.objectId,
      functionDeclaration: `function (...elements) {
        return elements.map((el) => {
          if (el.checkVisibility && !el.checkVisibility({ visibilityProperty: true })) return null;
          return { text: el.innerText || '', block: !getComputedStyle(el).display.startsWith('inline') };
        });
      }`,
      arguments: found.map(({ objectId }) => ({ objectId })),
      returnByValue: true,
    });
    const values = Array.isArray(result.value) ? (result.value as unknown[]) : [];
    found.forEach(({ backendNodeId }, i) => {
      const value = values[i] as HiddenText | null | undefined;
      if (value && typeof value.text === 'string' && value.text.trim())
        texts.set(backendNodeId, { text: value.text, block: value.block === true });
    });
  } catch (err) {
    // A page that stopped answering fails the read as any other call would; anything else (an element gone
    // in between) only costs this extra text.
    if (err instanceof ServiceError) throw err;
  } finally {
    await cdp.send('Runtime.releaseObjectGroup', { objectGroup: OBJECT_GROUP }).catch(() => undefined);
  }
  return texts;
}
