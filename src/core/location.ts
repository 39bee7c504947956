import { stateKey, type Session } from './sessions.js';

/** Where the session's page is, as a result tells a client. */
export interface PageLocation {
  url: string;
  title: string;
}

/** The location the session's latest navigate, act or extract answer carried or implied. */
const SHOWN = stateKey<PageLocation | undefined>('location.shown', () => undefined);

/**
 * `where` when it differs from the location the session's answers last showed (a click that changed the route or the
 * title, a tab switch), remembering it; undefined when the client already knows it. Results carry it so a model is
 * never unsure where it is, without paying for the URL on every answer.
 */
export function changedLocation(session: Session, where: PageLocation): PageLocation | undefined {
  const shown = session.state.get(SHOWN);
  session.state.set(SHOWN, where);
  return shown && shown.url === where.url && shown.title === where.title ? undefined : where;
}

/** The client has been told `where` (navigate's own answer). */
export function locationShown(session: Session, where: PageLocation): void {
  session.state.set(SHOWN, where);
}
