import { selectors, type Frame, type Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { DEFAULT_CALL_TIMEOUT_MS, frameSession, pageSession, type Cdp } from './cdp.js';
import type { ElementRef } from './index.js';

export const REFS_KEY = 'snapshot.refs';
const ENGINE = 'bsm-ref';
const PAGE_REFS_KEY = 'bsm.refs';

/** A ref of the latest snapshot and the DOM node it stands for. */
export interface RefTarget extends ElementRef {
  backendNodeId: number;
}

/**
 * Finds elements that resolveRef registered in the page's ref table. It reaches into closed shadow roots,
 * which Playwright's CSS and XPath engines cannot, because the table holds the elements themselves.
 */
function createRefEngine() {
  const table = () => (window as unknown as Record<symbol, Map<string, WeakRef<Element>> | undefined>)[Symbol.for('bsm.refs')];
  const find = (ref: string) => {
    const element = table()?.get(ref)?.deref();
    return element && element.isConnected ? element : null;
  };
  return {
    query: (_root: Node, ref: string) => find(ref),
    queryAll: (_root: Node, ref: string) => {
      const element = find(ref);
      return element ? [element] : [];
    },
  };
}

let registered: Promise<void> | undefined;
function registerEngine(): Promise<void> {
  registered ??= selectors.register(ENGINE, createRefEngine).catch((err: unknown) => {
    if (!String(err).includes('already registered')) throw err;
  });
  return registered;
}

/** Turns a ref of the latest snapshot into a Locator: registers the DOM node in the page's ref table via CDP. */
export async function resolveRefLocator(session: Session, ref: string): Promise<Locator> {
  await registerEngine();
  const cleaned = ref.trim().replace(/^\[|\]$/g, '');
  const refs = session.state.get(REFS_KEY) as Map<string, RefTarget> | undefined;
  const target = refs?.get(cleaned);
  if (!target) {
    throw new ServiceError('invalid_argument', `Unknown element ref "${ref}". Refs look like "0-41" and come from the latest page text; read the page again to get fresh ones.`);
  }
  const frame = session.frame(target.frameId);
  const { cdp, detach } = await cdpFor(session, frame);
  try {
    let objectId: string | undefined;
    try {
      ({ object: { objectId } } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', { backendNodeId: target.backendNodeId }));
    } catch (err) {
      if (err instanceof ServiceError) throw err;
    }
    if (!objectId) {
      throw new ServiceError('invalid_argument', `Element [${cleaned}] (${target.role} "${target.name}") is no longer on the page; read the page again to get fresh refs.`);
    }
    await cdp.send('Runtime.callFunctionOn', {
      objectId,
      functionDeclaration: `function (key, ref) { const slot = Symbol.for(key); (window[slot] ??= new Map()).set(ref, new WeakRef(this)); }`,
      arguments: [{ value: PAGE_REFS_KEY }, { value: cleaned }],
    });
    await cdp.send('Runtime.releaseObject', { objectId }).catch(() => undefined);
  } finally {
    await detach?.();
  }
  return frame.locator(`${ENGINE}=${cleaned}`);
}

async function cdpFor(session: Session, frame: Frame): Promise<{ cdp: Cdp; detach?: () => Promise<void> }> {
  const main = await pageSession(session.page, DEFAULT_CALL_TIMEOUT_MS);
  if (frame === session.page.mainFrame()) return { cdp: main };
  // Same-process frames share the page session, where backend node ids are unique too.
  return frameSession(frame, main, '', DEFAULT_CALL_TIMEOUT_MS).then((found) => (found.detach ? found : { cdp: main }));
}

