import { createRequire } from 'node:module';
import { ServiceError } from '../errors.js';

/**
 * The engines a selector given to act may name: Playwright's public ones, and the `internal:` ones behind its getBy*
 * locators, which codegen and `locator.normalize()` write (a session's script and replay use them: docs/replay.md).
 * Its other `internal:` engines, `_react` and `_vue` (which run Playwright's framework scripts in the page) and our own
 * ref engine are refused, part by part.
 */
const PUBLIC_ENGINES: ReadonlySet<string> = new Set([
  'css',
  'xpath',
  'text',
  'role',
  'id',
  'data-testid',
  'data-test-id',
  'data-test',
  'nth',
  'visible',
]);

/** The `internal:` engines of the getBy* locators, named exactly as Playwright writes them. */
const GET_BY_ENGINES: ReadonlySet<string> = new Set([
  'internal:role',
  'internal:testid',
  'internal:label',
  'internal:text',
  'internal:attr',
  'internal:has-text',
  'internal:has-not-text',
]);

/** `internal:control` only as a step into a frame: `iframe >> internal:control=enter-frame >> ...` (contentFrame()). */
const ENTER_FRAME = 'enter-frame';

interface ParsedSelector {
  parts: Array<{ name: string; body?: unknown }>;
}

let parse: ((selector: string) => ParsedSelector) | undefined;

/**
 * Parses a selector as Playwright does (its own parser, shipped in playwright-core), so each part's engine is the one
 * Playwright would run: `*internal:text=x`, `css=body >> internal:role=button` and `a >> _react=X` are found where a
 * look at the string's start would miss them. A selector Playwright cannot parse, or one naming another engine, is
 * `invalid_argument` before the page is touched.
 */
export function checkSelector(selector: string): void {
  parse ??= (createRequire(import.meta.url)('playwright-core/lib/coreBundle') as { iso: { parseSelector: typeof parse } }).iso
    .parseSelector;
  let parsed: ParsedSelector;
  try {
    parsed = parse!(selector);
  } catch (err) {
    const reason = err instanceof RangeError ? 'it is nested too deeply' : firstLine(err);
    throw new ServiceError('invalid_argument', `selector ${quoted(selector)} is not a valid Playwright selector: ${reason}`);
  }
  const refused = parsed.parts
    .filter((part) => !(part.name === 'internal:control' && part.body === ENTER_FRAME))
    .map((part) => part.name)
    .find((name) => !PUBLIC_ENGINES.has(name.toLowerCase()) && !GET_BY_ENGINES.has(name));
  if (refused !== undefined)
    throw new ServiceError(
      'invalid_argument',
      `selector ${quoted(selector)} uses the engine "${refused.slice(0, 40)}", which act does not take; use css=, xpath=, text=, role=, id=, data-testid=, nth=, visible=, or a getBy* locator's (internal:role=, internal:label=, ...).`,
    );
}

/** The selector as an error shows it: quoted, and cut (a selector may be long). */
function quoted(selector: string): string {
  return JSON.stringify(selector.length > 200 ? `${selector.slice(0, 200)}...` : selector);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
}
