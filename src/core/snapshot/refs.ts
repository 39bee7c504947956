import type { Frame, Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { stateKey, type Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, frameSession, pageSession, type Cdp } from '../page/cdp.js';
import type { ElementRef } from './types.js';
import { frameWorlds, isStaleWorld, registerElement } from './read.js';
import { ISOLATED_ENGINE, PAGE_REFS_KEY } from '../page/ref-engine.js';
import { RefNumbers } from './render.js';

/** The refs of the session's page texts of its current document (a new document starts them again). */
export const REFS = stateKey('snapshot.refs', () => new Map<string, RefTarget>());
/** The main frame's id at the latest read: its refs may be written without it ("12" for "0-12"). */
export const MAIN_REF_FRAME = stateKey('snapshot.mainRefFrame', () => '0');
/** Each frame's ref numbering, by frame id. */
const NUMBERS = stateKey('snapshot.refNumbers', () => new Map<string, RefNumbers>());

/**
 * The frame's ref numbering for a read of it, kept on the session while its document stays (told which elements the
 * read found gone); a new document gets a fresh one.
 */
export function refNumbers(session: Session, frameId: string, read: { document: string; gone: number[] }): RefNumbers {
  const all = session.state.get(NUMBERS);
  let numbers = all.get(frameId);
  if (!numbers || numbers.document !== read.document) all.set(frameId, (numbers = new RefNumbers(read.document)));
  numbers.left(read.gone);
  return numbers;
}

/** A ref of the latest snapshot and the element it stands for. */
export interface RefTarget extends ElementRef {
  /** The element's id in its document (the page text reader's). */
  elementId: number;
  /** CDP's id of the element's frame. */
  cdpFrameId: string;
  /** The reader's token of the element's document at the read. */
  document: string;
  password: boolean;
}

/** A ref as callers see it. */
export function elementRef({ ref, frameId, role, name, href }: RefTarget): ElementRef {
  return href === undefined ? { ref, frameId, role, name } : { ref, frameId, role, name, href };
}

/** The element a ref of the latest snapshot stands for, without touching the page; undefined when the ref is unknown. */
export function refTarget(session: Session, ref: string): ElementRef | undefined {
  const target = findTarget(session, ref.trim().replace(/^\[|\]$/g, ''));
  return target && elementRef(target);
}

/**
 * Turns a ref of the latest snapshot into a Locator: puts the element in the ref table of the reader's world in its
 * frame (Playwright's utility world: the page cannot see or change the table). The engine the locator names was
 * registered before the session's context was made (registry.newContext).
 */
export async function resolveRefLocator(session: Session, ref: string): Promise<Locator> {
  const cleaned = ref.trim().replace(/^\[|\]$/g, '');
  const target = findTarget(session, cleaned);
  if (!target) throw unknownRefError(ref);
  const frame = liveFrame(session, target, cleaned);
  const gone = () =>
    new ServiceError(
      'ref_not_found',
      `Element [${cleaned}] (${target.role} "${target.name}") is no longer on the page (it changed since the ref was read); ${READ_AGAIN}`,
    );
  const { cdp, detach } = await cdpFor(session, frame);
  try {
    const register = async (fresh: boolean) => {
      const worlds = await frameWorlds(cdp, target.cdpFrameId, fresh);
      return worlds.utility !== undefined && (await registerElement(cdp, worlds.utility, target, cleaned, PAGE_REFS_KEY));
    };
    const registered = await register(false).catch((err: unknown) => {
      if (!isStaleWorld(err)) throw err;
      return register(true).catch((again: unknown) => {
        if (isStaleWorld(again)) return false;
        throw again;
      });
    });
    if (!registered) throw gone();
    return frame.locator(`${ISOLATED_ENGINE}=${cleaned}`);
  } finally {
    await detach?.();
  }
}

/** How a caller gets refs that work, at the end of every `ref_not_found` message (the agent says its own way instead). */
export const READ_AGAIN = 'read the page again to get fresh refs.';

/**
 * `ref_not_found` for a ref no page text of the session gave. Only the reader writes refs: what the page wrote that looks
 * like one has a backslash (`\[12]`, render.ts `escaped`) and is never looked up as a ref.
 */
export function unknownRefError(ref: string): ServiceError {
  const written = ref.includes('\\') ? " A ref written with a backslash before it (\\[12]) is the page's own text, not a ref." : '';
  return new ServiceError(
    'ref_not_found',
    `Unknown element ref "${ref}".${written} Refs look like "41" (or "1-41" inside an iframe) and come from the latest page text; ${READ_AGAIN}`,
  );
}

/** A ref of the latest read, written as printed or with the main frame's id added or left out ("12" and "0-12"). */
function findTarget(session: Session, ref: string): RefTarget | undefined {
  const refs = session.state.get(REFS);
  const main = session.state.get(MAIN_REF_FRAME);
  const found = refs.get(ref);
  if (found) return found;
  if (/^\d+$/.test(ref)) return refs.get(`${main}-${ref}`);
  const dash = ref.lastIndexOf('-');
  return dash > 0 && ref.slice(0, dash) === main ? refs.get(ref.slice(dash + 1)) : undefined;
}

/** Whether a ref of the latest snapshot is a password input (as the reader saw it); false when unknown. */
export function isPasswordRef(session: Session, ref: string): boolean {
  return findTarget(session, ref.trim().replace(/^\[|\]$/g, ''))?.password ?? false;
}

/** The ref's frame; a frame that has gone makes the ref stale, not the caller's frame id wrong. */
function liveFrame(session: Session, target: RefTarget, ref: string): Frame {
  try {
    return session.frame(target.frameId);
  } catch {
    throw new ServiceError(
      'ref_not_found',
      `Element [${ref}] (${target.role} "${target.name}") was in a frame that is no longer on the page; ${READ_AGAIN}`,
    );
  }
}

async function cdpFor(session: Session, frame: Frame): Promise<{ cdp: Cdp; detach?: () => Promise<void> }> {
  const main = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
  if (frame === session.page.mainFrame()) return { cdp: main };
  // Same-process frames share the page session, where their worlds are told apart by CDP frame id.
  return frameSession(frame, main, DEFAULT_CALL_TIMEOUT_MS);
}
