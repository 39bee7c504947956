import { ServiceError } from '../errors.js';
import type { AXNode, AXTree } from './ax.js';
import type { Cdp } from './cdp.js';

/**
 * Most elements the page text reads in one go (twice the biggest real page we test, wikipedia-2). Chromium answers with
 * the whole tree in one CDP message (about 800 bytes an element), which the one connection and the one Node thread
 * every session shares must take in: a 200,000-element page's held other sessions up for seconds (docs/pagetext.md).
 */
export const MAX_PAGE_ELEMENTS = 20_000;

/** Counts the elements of the element `backendNodeId` (or the document), open shadow roots and same-origin iframes included. */
export async function countElements(cdp: Cdp, backendNodeId?: number): Promise<number> {
  const count = `function () {
    let total = 0;
    const visit = (root) => {
      const all = root.querySelectorAll('*');
      total += all.length + (root.nodeType === 1 ? 1 : 0);
      for (const el of all) {
        if (el.shadowRoot) visit(el.shadowRoot);
        if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
          let doc = null;
          try { doc = el.contentDocument; } catch {}
          if (doc) visit(doc);
        }
      }
    };
    visit(this && this.nodeType ? this : document);
    return total;
  }`;
  if (backendNodeId === undefined) {
    const evaluated = await cdp.send<{ result: { value?: number } }>('Runtime.evaluate', {
      expression: `(${count}).call(document)`,
      returnByValue: true,
    });
    return evaluated.result.value ?? 0;
  }
  const { object } = await cdp.send<{ object: { objectId: string } }>('DOM.resolveNode', { backendNodeId });
  try {
    const evaluated = await cdp.send<{ result: { value?: number } }>('Runtime.callFunctionOn', {
      objectId: object.objectId,
      functionDeclaration: count,
      returnByValue: true,
    });
    return evaluated.result.value ?? 0;
  } finally {
    await cdp.send('Runtime.releaseObject', { objectId: object.objectId }).catch(() => undefined);
  }
}

/** The error for a page (or a selected part) over MAX_PAGE_ELEMENTS, saying how to read it anyway. */
export function pageTooLarge(elements: number, scoped: boolean): ServiceError {
  const where = scoped ? 'The selected part of the page has' : 'The page has';
  return new ServiceError(
    'page_too_large',
    `${where} ${elements} elements; the page text reads at most ${MAX_PAGE_ELEMENTS} at once. ` +
      'Pass a selector (XPath) for the part you need, e.g. "//main" or "//table[1]".',
    { details: { elements, maxElements: MAX_PAGE_ELEMENTS } },
  );
}

/** The accessibility subtree of one DOM element, without asking for the whole page's tree. */
export async function fetchAXSubtree(cdp: Cdp, backendNodeId: number): Promise<AXTree> {
  const { nodes } = await cdp.send<{ nodes: AXNode[] }>('Accessibility.queryAXTree', { backendNodeId });
  const byId = new Map<string, AXNode>();
  for (const node of nodes) byId.set(node.nodeId, node);
  const root = nodes.find((node) => node.parentId === undefined || !byId.has(node.parentId));
  if (!root) throw new ServiceError('selector_not_found', 'The selected element has no content to read.');
  const { root: document } = await cdp.send<{ root: { backendNodeId: number } }>('DOM.getDocument', { depth: 0 });
  return { nodes: byId, root, document: document.backendNodeId };
}
