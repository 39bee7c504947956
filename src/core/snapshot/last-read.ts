import { stateKey, type Session } from '../sessions.js';

/** The newest whole-page text read on a page: what act compares the page with after an action. */
export interface LastRead {
  text: string;
  url: string;
  /** The main document's token (the page text reader's): another value means the page navigated to a new document. */
  document: string;
  iframes: boolean;
}

// Per page: a tab selected later, or a page replaced after a crash, has its own (or no) earlier read.
const LAST_READ = stateKey<{ read?: LastRead }>('snapshot.lastRead', () => ({}));

export function rememberRead(session: Session, read: LastRead): void {
  session.watched.state.get(LAST_READ).read = read;
}

export function lastRead(session: Session): LastRead | undefined {
  return session.watched.state.get(LAST_READ).read;
}
