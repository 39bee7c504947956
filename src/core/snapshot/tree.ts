/** The tree the renderer walks: the in-page reader's answer (walker.ts), with parent links and readable field names. */
export interface PageNode {
  /** ARIA role or the reader's own (`StaticText` for text, `Iframe`, `MenuListPopup`, `LineBreak`, `VisualRow`). */
  role: string;
  /** Accessible name; for text, the text. */
  name: string;
  value?: string;
  /** States and properties: level, url, focusable, checked, pressed, selected, expanded, disabled, required, readonly. */
  props?: Record<string, string | number | boolean>;
  /** Transparent: its content is read in its place. */
  ignored: boolean;
  parent?: PageNode;
  children: PageNode[];
  /** The element's id in its document (the reader's, stable while the element stays); refs are made from it. */
  elementId?: number;
}
