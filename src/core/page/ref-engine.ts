import { selectors } from 'playwright-core';

/** The ref engine, in Playwright's utility world of every frame. */
export const ISOLATED_ENGINE = 'bsm-iref';
/** The symbol key (Symbol.for) of the ref table on the world's window. */
export const PAGE_REFS_KEY = 'bsm.refs';

/**
 * Finds the element resolveRef put in the frame's ref table. It reaches into closed shadow roots, which Playwright's
 * CSS and XPath engines cannot, because the table holds the elements themselves. The table lives in Playwright's
 * isolated utility world, where the page text's reader runs: the page cannot see or change it, and an action needs no
 * script of Playwright's in the page's own world (tens of ms to set up on every new document).
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
/**
 * Registers the engine once per process. Awaited before every context is created: Playwright gives a document's
 * injected script the engines registered when that script was made, so a page whose utility-world script existed
 * before the first registration (made by an ariaSnapshot, say) would not know bsm-iref until its next document.
 */
export function registerRefEngines(): Promise<void> {
  registered ??= selectors.register(ISOLATED_ENGINE, { content: REF_ENGINE }, { contentScript: true }).catch((err: unknown) => {
    if (!String(err).includes('already registered')) throw err;
  });
  return registered;
}
