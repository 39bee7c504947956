import { selectors, type Frame, type Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { stateKey, type Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, frameSession, pageSession, type Cdp } from './cdp.js';
import type { AXTree } from './ax.js';
import type { ElementRef } from './types.js';
import { RefNumbers } from './render.js';

/** The refs of the session's latest page text; replaced by every read. */
export const REFS = stateKey('snapshot.refs', () => new Map<string, RefTarget>());
/** The main frame's id at the latest read: its refs may be written without it ("12" for "0-12"). */
export const MAIN_REF_FRAME = stateKey('snapshot.mainRefFrame', () => '0');
/** Each frame's ref numbering, by frame id. */
const NUMBERS = stateKey('snapshot.refNumbers', () => new Map<string, RefNumbers>());
const ENGINE = 'bsm-ref';
const PAGE_REFS_KEY = 'bsm.refs';

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

/**
 * Finds elements that resolveRef registered in the page's ref table. It reaches into closed shadow roots,
 * which Playwright's CSS and XPath engines cannot, because the table holds the elements themselves.
 * A string, not a function: bundlers' helper calls in a function body would not exist in the page.
 */
const REF_ENGINE = `({
  find(ref) {
    const element = window[Symbol.for(${JSON.stringify(PAGE_REFS_KEY)})]?.get(ref)?.deref();
    return element && element.isConnected ? element : null;
  },
  query(_root, ref) { return this.find(ref); },
  queryAll(_root, ref) { const element = this.find(ref); return element ? [element] : []; },
})`;

let registered: Promise<void> | undefined;
function registerEngine(): Promise<void> {
  registered ??= selectors.register(ENGINE, { content: REF_ENGINE }).catch((err: unknown) => {
    if (!String(err).includes('already registered')) throw err;
  });
  return registered;
}

/** The element a ref of the latest snapshot stands for, without touching the page; undefined when the ref is unknown. */
export function refTarget(session: Session, ref: string): ElementRef | undefined {
  const target = findTarget(session, ref.trim().replace(/^\[|\]$/g, ''));
  if (!target) return undefined;
  const { backendNodeId: _unused, ...element } = target;
  return element;
}

/** Turns a ref of the latest snapshot into a Locator: registers the DOM node in the page's ref table via CDP. */
export async function resolveRefLocator(session: Session, ref: string): Promise<Locator> {
  await registerEngine();
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
    let objectId: string | undefined;
    try {
      ({
        object: { objectId },
      } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', { backendNodeId: target.backendNodeId }));
    } catch (err) {
      if (err instanceof ServiceError) throw err;
    }
    if (!objectId) {
      throw new ServiceError(
        'ref_not_found',
        `Element [${cleaned}] (${target.role} "${target.name}") is no longer on the page (it changed since the ref was read); read the page again to get fresh refs.`,
      );
    }
    const registered = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      objectId,
      functionDeclaration: `function (key, ref) { if (!this.isConnected) return false; const slot = Symbol.for(key); (window[slot] ??= new Map()).set(ref, new WeakRef(this)); return true; }`,
      arguments: [{ value: PAGE_REFS_KEY }, { value: cleaned }],
      returnByValue: true,
    });
    if (registered.result.value !== true) {
      await cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
      throw new ServiceError(
        'ref_not_found',
        `Element [${cleaned}] (${target.role} "${target.name}") is no longer on the page (it changed since the ref was read); read the page again to get fresh refs.`,
      );
    }
    await cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
  } finally {
    await detach?.();
  }
  return frame.locator(`${ENGINE}=${cleaned}`);
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
