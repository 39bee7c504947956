import { ServiceError } from '../errors.js';

/**
 * Most elements the page text reads in one go (twice the biggest real page we test, wikipedia-2), counted in the page
 * (the document, open and closed shadow roots, same-origin iframes) before reading. The read walks them in the page's
 * renderer, and every session's pages may share one renderer process (docs/pagetext.md).
 */
export const MAX_PAGE_ELEMENTS = 20_000;

/** The error for a page (or a selected part) over MAX_PAGE_ELEMENTS, saying how to read it anyway. */
export function pageTooLarge(elements: number, scoped: boolean): ServiceError {
  const where = scoped ? 'The selected part of the page has' : 'The page has';
  return new ServiceError(
    'page_too_large',
    `${where} ${elements} elements; the page text reads at most ${MAX_PAGE_ELEMENTS} at once. ` +
      'Pass a selector (XPath) for the part you need, e.g. "//main" or "//table[1]".',
    { details: { elements, maxElements: MAX_PAGE_ELEMENTS } },
  );
}
