import type { Frame } from 'playwright-core';
import type { Session } from '../sessions.js';
import { refTarget } from '../snapshot/refs.js';
import type { Variables } from '../variables.js';
import type { Action } from './schema.js';

/**
 * Before an action fills in `%name%` values: refuses (`variable_not_allowed`) a variable limited to origins that the
 * action would send elsewhere, and tells the session's secrets that one is typed (from now on the page may show it:
 * the trace keeps only masked pictures). `args` are the arguments with the values filled in.
 */
export function checkVariables(session: Session, action: Action, variables: Variables, args: Record<string, unknown>): void {
  if (!variables.usedIn(action.arguments)) return;
  variables.checkOrigins(action.arguments, destinations(session, action, args));
  session.recording.secrets.typed();
}

/**
 * The URLs an action's values reach: a new tab's address; else the page's, and the frame of the ref it targets, or,
 * with no element named (keys, a point), every frame of the page, since the focus may be in any of them.
 */
function destinations(session: Session, action: Action, args: Record<string, unknown>): string[] {
  if (action.method === 'newTab') return [String(args.url)];
  const page = session.page;
  const urls = [frameUrl(page.mainFrame())];
  if (action.ref) {
    const frameId = refTarget(session, action.ref)?.frameId;
    const frame = frameId === undefined ? undefined : liveFrame(session, frameId);
    // A ref whose frame has gone is refused by the action itself.
    if (frame) urls.push(frameUrl(frame));
  } else if (action.selector === undefined) {
    for (const frame of page.frames()) urls.push(frameUrl(frame));
  }
  return urls;
}

/** A frame's URL, or for `about:blank` and `about:srcdoc` (their parent's origin) the nearest ancestor's. */
function frameUrl(frame: Frame): string {
  for (let at: Frame | null = frame; at; at = at.parentFrame()) {
    const url = at.url();
    if (url && !/^about:(blank|srcdoc)$/i.test(url)) return url;
  }
  return 'about:blank';
}

function liveFrame(session: Session, frameId: string): Frame | undefined {
  try {
    return session.frame(frameId);
  } catch {
    return undefined;
  }
}
