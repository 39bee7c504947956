import { ServiceError } from '../errors.js';
import type { AXNode, AXTree } from './ax.js';
import type { Cdp } from './cdp.js';

/** Strips an optional "xpath=" prefix; anything else must be XPath. */
export function xpathOf(selector: string): string {
  const trimmed = selector.trim();
  return trimmed.replace(/^xpath=/i, '');
}

/** The DOM node the XPath selects in the main frame, as a backend node id. */
export async function resolveScope(cdp: Cdp, selector: string): Promise<number> {
  const xpath = xpathOf(selector);
  if (!xpath)
    throw new ServiceError('invalid_argument', 'selector is empty; pass an XPath such as "//main" or "xpath=//div[@id=\'content\']".');
  const expression = `(() => {
    const result = document.evaluate(${JSON.stringify(xpath)}, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
    return result && result.nodeType !== Node.ELEMENT_NODE && result.nodeType !== Node.DOCUMENT_NODE ? result.parentElement : result;
  })()`;
  const evaluated = await cdp.send<{
    result: { objectId?: string; subtype?: string };
    exceptionDetails?: { exception?: { description?: string } };
  }>('Runtime.evaluate', { expression });
  if (evaluated.exceptionDetails) {
    const reason = evaluated.exceptionDetails.exception?.description?.split('\n')[0] ?? 'invalid expression';
    throw new ServiceError('invalid_argument', `selector is not a valid XPath: ${reason}`);
  }
  const objectId = evaluated.result.objectId;
  if (!objectId || evaluated.result.subtype === 'null') {
    throw new ServiceError('selector_not_found', `The selector ${JSON.stringify(selector)} matches nothing on the page.`);
  }
  const { node } = await cdp.send<{ node: { backendNodeId: number } }>('DOM.describeNode', { objectId });
  await cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
  return node.backendNodeId;
}

/**
 * The accessibility nodes that stand for a DOM subtree: the element's own node when it has one,
 * otherwise the topmost nodes of its descendants.
 */
export async function scopeRoots(cdp: Cdp, tree: AXTree, backendNodeId: number): Promise<AXNode[]> {
  for (const node of tree.nodes.values()) if (node.backendDOMNodeId === backendNodeId) return [node];
  const { node } = await cdp.send<{ node: DomNode }>('DOM.describeNode', { backendNodeId, depth: -1, pierce: true });
  const inside = new Set<number>();
  const walk = (dom: DomNode) => {
    inside.add(dom.backendNodeId);
    for (const kid of [...(dom.children ?? []), ...(dom.shadowRoots ?? [])]) walk(kid);
  };
  walk(node);
  const roots: AXNode[] = [];
  for (const ax of tree.nodes.values()) {
    if (ax.backendDOMNodeId === undefined || !inside.has(ax.backendDOMNodeId)) continue;
    const parent = ax.parentId ? tree.nodes.get(ax.parentId) : undefined;
    if (!parent?.backendDOMNodeId || !inside.has(parent.backendDOMNodeId)) roots.push(ax);
  }
  return roots;
}

interface DomNode {
  backendNodeId: number;
  children?: DomNode[];
  shadowRoots?: DomNode[];
}
