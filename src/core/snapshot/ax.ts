import type { Cdp } from './cdp.js';

/** The parts of CDP's Accessibility.AXNode that the page text reads. */
export interface AXValue {
  type: string;
  value?: unknown;
}
export interface AXProperty {
  name: string;
  value: AXValue;
}
export interface AXNode {
  nodeId: string;
  ignored: boolean;
  ignoredReasons?: AXProperty[];
  role?: AXValue;
  name?: AXValue;
  value?: AXValue;
  properties?: AXProperty[];
  parentId?: string;
  childIds?: string[];
  backendDOMNodeId?: number;
}

/** One frame's accessibility tree, indexed. */
export interface AXTree {
  nodes: Map<string, AXNode>;
  root: AXNode;
  /** The document's backend node id, when `root` is a part of it rather than the document itself. */
  document?: number;
}

/** Reads the full accessibility tree of the frame `cdp` is bound to (shadow DOM, open and closed, included). */
export async function fetchAXTree(cdp: Cdp): Promise<AXTree> {
  const { nodes } = await cdp.send<{ nodes: AXNode[] }>('Accessibility.getFullAXTree', cdp.frameId ? { frameId: cdp.frameId } : {});
  const byId = new Map<string, AXNode>();
  for (const node of nodes) byId.set(node.nodeId, node);
  const root = nodes.find((node) => node.parentId === undefined || !byId.has(node.parentId)) ?? nodes[0];
  if (!root) throw new Error('empty accessibility tree');
  return { nodes: byId, root };
}

export function role(node: AXNode): string {
  return String(node.role?.value ?? '');
}

export function name(node: AXNode): string {
  const value = node.name?.value;
  return typeof value === 'string' ? value : '';
}

export function property(node: AXNode, key: string): unknown {
  return node.properties?.find((p) => p.name === key)?.value.value;
}
