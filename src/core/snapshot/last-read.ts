import type { Session } from '../sessions.js';

/** The newest whole-page text read on a session: what act compares the page with after an action. */
export interface LastRead {
  text: string;
  url: string;
  /** The main document's DOM node id: another value means the page navigated to a new document. */
  document: number | undefined;
  iframes: boolean;
}

// Kept beside the session rather than on it until sessions get typed per-feature state.
const reads = new WeakMap<Session, LastRead>();

export function rememberRead(session: Session, read: LastRead): void {
  reads.set(session, read);
}

export function lastRead(session: Session): LastRead | undefined {
  return reads.get(session);
}
