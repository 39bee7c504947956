import { selectors } from 'playwright-core';

/** The ref engine in the page's own world (refs inside iframes) and in Playwright's utility world (the main frame's). */
export const ENGINE = 'bsm-ref';
export const ISOLATED_ENGINE = 'bsm-iref';
/** The symbol key (Symbol.for) of the ref table on a world's window. */
export const PAGE_REFS_KEY = 'bsm.refs';

/**
 * Finds elements that resolveRef registered in a ref table of the frame. It reaches into closed shadow roots,
 * which Playwright's CSS and XPath engines cannot, because the table holds the elements themselves.
 * A string, not a function: bundlers' helper calls in a function body would not exist in the page.
 * Registered twice: in Playwright's isolated utility world (the main frame's refs: the page cannot see or change the
 * table, and an action needs no script of Playwright's in the page's own world, which costs tens of ms to set up on
 * every new document), and in the page's world (refs inside iframes, whose utility world is not looked up).
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
/**
 * Registers both engines once per process. Awaited before every context is created: Playwright gives a document's
 * injected script the engines registered when that script was made, so a page whose utility-world script existed
 * before the first registration (made by an ariaSnapshot, say) would not know bsm-iref until its next document.
 */
export function registerRefEngines(): Promise<void> {
  const register = (name: string, contentScript: boolean) =>
    selectors.register(name, { content: REF_ENGINE }, { contentScript }).catch((err: unknown) => {
      if (!String(err).includes('already registered')) throw err;
    });
  registered ??= Promise.all([register(ENGINE, false), register(ISOLATED_ENGINE, true)]).then(() => undefined);
  return registered;
}
