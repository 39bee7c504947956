/**
 * The tree the renderer walks: the in-page reader's answer (walker.ts) in the shape of Chromium's accessibility nodes,
 * which the page text was first read from.
 */
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
  role?: AXValue;
  name?: AXValue;
  value?: AXValue;
  properties?: AXProperty[];
  parentId?: string;
  childIds?: string[];
  /** The element's id in its document (the reader's, stable while the element stays); refs are made from it. */
  elementId?: number;
}

/** One frame's tree, indexed. */
export interface AXTree {
  nodes: Map<string, AXNode>;
  root: AXNode;
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
