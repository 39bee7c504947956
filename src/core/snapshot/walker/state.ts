import { WALKER_STATE_KEY } from './types.js';

/** The reader's state in a document's world, kept from read to read: the document's token and its elements' ids. */
export type State = { doc: string; ids: WeakMap<Element, number>; next: number; nodes: Map<number, WeakRef<Element>> };

/** The document's state, made on its first read. */
export function documentState(): State {
  const win = window as unknown as Record<symbol, State | undefined>;
  return (win[Symbol.for(WALKER_STATE_KEY)] ??= {
    doc: `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`,
    ids: new WeakMap(),
    next: 1,
    nodes: new Map(),
  });
}

/** Forgets the elements that have left the document, and answers their ids. */
export function forgetGone(state: State): number[] {
  const gone: number[] = [];
  for (const [id, ref] of state.nodes)
    if (!ref.deref()?.isConnected) {
      state.nodes.delete(id);
      gone.push(id);
    }
  return gone;
}

/** The element's id in this document: the same from read to read while it stays. */
export function idOf(state: State, el: Element): number {
  let id = state.ids.get(el);
  if (id === undefined) state.ids.set(el, (id = state.next++));
  state.nodes.set(id, new WeakRef(el));
  return id;
}
