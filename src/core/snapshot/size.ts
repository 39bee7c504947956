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

/** Most closed shadow roots the page text reads in one page: each is handed to the reader by a CDP call of its own. */
export const MAX_CLOSED_ROOTS = 500;

/**
 * The error for a page over MAX_PAGE_ELEMENTS once the elements of its closed shadow roots are counted (by the browser,
 * before it sends its DOM), or over MAX_CLOSED_ROOTS. Closed roots are found by a look through the whole page, so a
 * selected part is refused too.
 */
export function closedShadowTooLarge(elements: number, closedRoots?: number): ServiceError {
  const what =
    closedRoots === undefined
      ? `${elements} elements, counting those in its closed shadow roots; the page text reads at most ${MAX_PAGE_ELEMENTS}`
      : `${closedRoots} closed shadow roots; the page text reads at most ${MAX_CLOSED_ROOTS}`;
  return new ServiceError(
    'page_too_large',
    `The page has ${what} at once, and finds closed shadow roots only by looking through the whole page, so no part of ` +
      'it can be read either. Act on it by selector or coordinates (take a screenshot to see it).',
    {
      details: {
        elements,
        maxElements: MAX_PAGE_ELEMENTS,
        ...(closedRoots === undefined ? {} : { closedRoots, maxClosedRoots: MAX_CLOSED_ROOTS }),
      },
    },
  );
}
