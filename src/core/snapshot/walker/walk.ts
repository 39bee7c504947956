import type { State } from './state.js';
import type { WalkOptions } from './types.js';

/** One read: its options, what the server handed in, the roles it reads by, and what is left of its limits. */
export interface Walk {
  options: WalkOptions;
  /** The document's state (its token and element ids), kept from read to read. */
  state: State;
  /** Closed shadow roots handed in by the server, by their host. */
  closed: Map<Element, ShadowRoot>;
  /** Elements with a click, dblclick, contextmenu, mousedown, pointerdown, keydown or drop listener (found by the server over CDP). */
  listened: Set<Element>;
  /** Roles a user acts on (the renderer's): their elements get ids for refs. */
  interactive: Set<string>;
  /** Roles the page text prints a name for (controls, images, frames, containers); others are read through their content. */
  named: Set<string>;
  /** Roles a `role` attribute may give. */
  ariaRoles: Set<string>;
  /** Aria-hidden regions whose on-screen text may still be read. */
  hiddenLeft: number;
  /** `<time datetime>` values that may still be shown. */
  timesLeft: number;
}

/** What an element's content inherits from it on the way down. */
export interface Context {
  visible: boolean;
  pre: boolean;
  flexParent: boolean;
  /** Inside a <label> whose text is its control's name (Chromium leaves that text out of its tree too). */
  mute: boolean;
  depth: number;
  /** The parent shows a pointer cursor (its children inherit it: only the outermost gets a ref). */
  pointer: boolean;
  control: boolean;
  /** Inside an element that handles clicks for a list of like items (a data grid's body): its words are targets. */
  delegated: boolean;
}

export function rootOf(walk: Walk, el: Element): ShadowRoot | null {
  return el.shadowRoot ?? walk.closed.get(el) ?? null;
}

/** The children of a node in the flat tree: its shadow root's content, a slot's assigned nodes, or its own children. */
export function flatChildren(node: Node, shadow: ShadowRoot | null): Node[] {
  if (shadow) return Array.from(shadow.childNodes);
  if ((node as Element).localName === 'slot') {
    const assigned = (node as HTMLSlotElement).assignedNodes();
    if (assigned.length) return assigned;
  }
  return Array.from(node.childNodes);
}

/** How many elements the read would meet: those of the document or part, its shadow roots and same-origin frames. */
export function countIn(walk: Walk, start: Element | Document | ShadowRoot): number {
  let total = 0;
  const visit = (root: Element | Document | ShadowRoot) => {
    const all = root.querySelectorAll('*');
    total += all.length + (root.nodeType === 1 ? 1 : 0);
    for (const el of all) {
      const shadow = rootOf(walk, el);
      if (shadow) visit(shadow);
      if (el.localName === 'iframe' || el.localName === 'frame') {
        // contentDocument is null for a cross-origin frame: its elements are counted when it is read on its own.
        const doc = (el as HTMLIFrameElement).contentDocument;
        if (doc) visit(doc);
      }
    }
  };
  visit(start);
  return total;
}
