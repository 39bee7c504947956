import type { Frame, Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { stateKey, type Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, frameSession, pageSession, type Cdp } from './cdp.js';
import type { AXTree } from './ax.js';
import type { ElementRef } from './types.js';
import { ENGINE, ISOLATED_ENGINE, PAGE_REFS_KEY } from './ref-engine.js';
import { RefNumbers } from './render.js';

/** The refs of the session's latest page text; replaced by every read. */
export const REFS = stateKey('snapshot.refs', () => new Map<string, RefTarget>());
/** The main frame's id at the latest read: its refs may be written without it ("12" for "0-12"). */
export const MAIN_REF_FRAME = stateKey('snapshot.mainRefFrame', () => '0');
/** Each frame's ref numbering, by frame id. */
const NUMBERS = stateKey('snapshot.refNumbers', () => new Map<string, RefNumbers>());

/** The frame's ref numbering, kept on the session while its document stays; a new document gets a fresh one. */
export function refNumbers(session: Session, frameId: string, tree: AXTree): RefNumbers {
  const all = session.state.get(NUMBERS);
  const document = tree.document ?? tree.root.backendDOMNodeId;
  let numbers = all.get(frameId);
  if (!numbers || document === undefined || numbers.document !== document) all.set(frameId, (numbers = new RefNumbers(document)));
  return numbers;
}

/** A ref of the latest snapshot and the DOM node it stands for. */
export interface RefTarget extends ElementRef {
  backendNodeId: number;
}

/** Playwright names its utility world `__playwright_utility_world_<page guid>` (crPage); looked up by this prefix. */
const UTILITY_WORLD_PREFIX = '__playwright_utility_world_';

/** The element a ref of the latest snapshot stands for, without touching the page; undefined when the ref is unknown. */
export function refTarget(session: Session, ref: string): ElementRef | undefined {
  const target = findTarget(session, ref.trim().replace(/^\[|\]$/g, ''));
  if (!target) return undefined;
  const { backendNodeId: _unused, ...element } = target;
  return element;
}

/**
 * Turns a ref of the latest snapshot into a Locator: registers the DOM node in the page's ref table via CDP. The
 * engines the locator names were registered before the session's context was made (registry.newContext).
 */
export async function resolveRefLocator(session: Session, ref: string): Promise<Locator> {
  const cleaned = ref.trim().replace(/^\[|\]$/g, '');
  const target = findTarget(session, cleaned);
  if (!target) {
    throw new ServiceError(
      'ref_not_found',
      `Unknown element ref "${ref}". Refs look like "41" (or "1-41" inside an iframe) and come from the latest page text; read the page again to get fresh ones.`,
    );
  }
  const frame = liveFrame(session, target, cleaned);
  const { cdp, detach } = await cdpFor(session, frame);
  try {
    const isolated = frame === session.page.mainFrame() ? await utilityWorld(cdp) : undefined;
    await registerRef(cdp, target, cleaned, isolated);
    return frame.locator(`${isolated === undefined ? ENGINE : ISOLATED_ENGINE}=${cleaned}`);
  } finally {
    await detach?.();
  }
}

/** Puts the ref's DOM node in the ref table of the given world (the node's own frame's page world when none). */
async function registerRef(cdp: Cdp, target: RefTarget, ref: string, executionContextId: number | undefined): Promise<void> {
  const gone = () =>
    new ServiceError(
      'ref_not_found',
      `Element [${ref}] (${target.role} "${target.name}") is no longer on the page (it changed since the ref was read); read the page again to get fresh refs.`,
    );
  let objectId: string | undefined;
  try {
    ({
      object: { objectId },
    } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', {
      backendNodeId: target.backendNodeId,
      ...(executionContextId === undefined ? {} : { executionContextId }),
    }));
  } catch (err) {
    if (err instanceof ServiceError) throw err;
  }
  if (!objectId) throw gone();
  const registered = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
    objectId,
    functionDeclaration: `function (key, ref) { if (!this.isConnected) return false; const slot = Symbol.for(key); (window[slot] ??= new Map()).set(ref, new WeakRef(this)); return true; }`,
    arguments: [{ value: PAGE_REFS_KEY }, { value: ref }],
    returnByValue: true,
  });
  // Nothing waits on the release: the session runs it before any later command all the same.
  cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
  if (registered.result.value !== true) throw gone();
}

/**
 * The execution context id of Playwright's utility world in the page's main frame, from the contexts the page session
 * lists when Runtime is enabled on it (enabled only for this look-up; Playwright's own session keeps it enabled, so the
 * page sees nothing new); undefined when there is none, and the ref goes to the page's world as before.
 */
async function utilityWorld(cdp: Cdp): Promise<number | undefined> {
  const contexts: Array<{ id: number; name: string; auxData?: { frameId?: string } }> = [];
  const created = (event: { context: (typeof contexts)[number] }) => contexts.push(event.context);
  cdp.session.on('Runtime.executionContextCreated', created);
  try {
    const [tree] = await Promise.all([cdp.send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree'), cdp.send('Runtime.enable')]);
    const frameId = tree.frameTree.frame.id;
    const found = contexts.filter((context) => context.name.startsWith(UTILITY_WORLD_PREFIX) && context.auxData?.frameId === frameId);
    return found.at(-1)?.id;
  } catch (err) {
    if (err instanceof ServiceError) throw err;
    return undefined;
  } finally {
    cdp.session.off('Runtime.executionContextCreated', created);
    cdp.send('Runtime.disable').catch(() => undefined);
  }
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

/** Whether a ref of the latest snapshot is a password input, asked over CDP (not a traced call); false when unknown. */
export async function isPasswordRef(session: Session, ref: string): Promise<boolean> {
  const target = findTarget(session, ref.trim().replace(/^\[|\]$/g, ''));
  if (!target) return false;
  try {
    const { cdp, detach } = await cdpFor(session, session.frame(target.frameId));
    try {
      const { node } = await cdp.send<{ node: { attributes?: string[] } }>('DOM.describeNode', { backendNodeId: target.backendNodeId });
      const attributes = node.attributes ?? [];
      for (let i = 0; i + 1 < attributes.length; i += 2)
        if (attributes[i]!.toLowerCase() === 'type' && attributes[i + 1]!.toLowerCase() === 'password') return true;
      return false;
    } finally {
      await detach?.();
    }
  } catch {
    return false;
  }
}

/** The ref's frame; a frame that has gone makes the ref stale, not the caller's frame id wrong. */
function liveFrame(session: Session, target: RefTarget, ref: string): Frame {
  try {
    return session.frame(target.frameId);
  } catch {
    throw new ServiceError(
      'ref_not_found',
      `Element [${ref}] (${target.role} "${target.name}") was in a frame that is no longer on the page; read the page again to get fresh refs.`,
    );
  }
}

async function cdpFor(session: Session, frame: Frame): Promise<{ cdp: Cdp; detach?: () => Promise<void> }> {
  const main = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
  if (frame === session.page.mainFrame()) return { cdp: main };
  // Same-process frames share the page session, where backend node ids are unique too.
  return frameSession(frame, main, '', DEFAULT_CALL_TIMEOUT_MS).then((found) => (found.detach ? found : { cdp: main }));
}
