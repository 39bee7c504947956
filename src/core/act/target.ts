import type { Locator } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { Session } from '../sessions.js';
import { bounded, DEFAULT_CALL_TIMEOUT_MS, pageSession } from '../page/cdp.js';
import { frameWorlds } from '../snapshot/read.js';

/** Candidates a `selector_ambiguous` error lists. */
const MAX_CANDIDATES = 5;
/** Longest text shown of a candidate or of the element under a point. */
const MAX_TEXT = 60;

/** A point in the viewport, CSS pixels, as a screenshot at scale 1 shows it. */
export interface Point {
  x: number;
  y: number;
}

/**
 * The one visible element a Playwright selector (`css=`, `xpath=`, `text=`, `role=button[name="Save"]`, `>>` chains)
 * matches on the session's page. Several visible matches are `selector_ambiguous`, listing the first ones with a
 * selector for each; none is `selector_not_found`. Playwright's `internal:` engines are refused.
 */
export async function resolveSelector(session: Session, selector: string, timeoutMs: number): Promise<Locator> {
  const given = selector.trim();
  if (!given)
    throw new ServiceError('invalid_argument', 'selector is empty; pass a Playwright selector such as "text=Save" or "css=#start".');
  if (/(^|>>)\s*internal:/i.test(given))
    throw new ServiceError(
      'invalid_argument',
      `selector ${JSON.stringify(given)} uses an internal: engine; use css=, xpath=, text= or role=.`,
    );
  const all = session.page.locator(given);
  const count = await bounded(all.count(), timeoutMs, `finding ${given}`).catch((err: unknown) => {
    if (err instanceof ServiceError) throw err;
    throw new ServiceError('invalid_argument', `selector ${JSON.stringify(given)} is not a valid Playwright selector: ${firstLine(err)}`, {
      cause: err,
    });
  });
  const visible = all.filter({ visible: true });
  const shown = count === 0 ? 0 : await bounded(visible.count(), timeoutMs, `finding ${given}`);
  if (shown === 1) return visible;
  if (shown === 0)
    throw new ServiceError(
      'selector_not_found',
      count === 0
        ? `The selector ${JSON.stringify(given)} matches nothing on the page. Read the page text for its words, or use a ref.`
        : `The selector ${JSON.stringify(given)} matches ${count} element${count === 1 ? '' : 's'}, none of them visible.`,
    );
  const texts = await Promise.all(
    Array.from({ length: Math.min(shown, MAX_CANDIDATES) }, (_, i) =>
      visible
        .nth(i)
        .innerText({ timeout: Math.min(timeoutMs, 2_000) })
        .then(
          (text) => session.recording.secrets.mask(clip(text)),
          () => '',
        ),
    ),
  );
  const listed = texts.map((text, i) => `${JSON.stringify(`${given} >> nth=${i}`)}${text ? ` (${JSON.stringify(text)})` : ''}`);
  throw new ServiceError(
    'selector_ambiguous',
    `The selector ${JSON.stringify(given)} matches ${shown} visible elements; make it match one: ${listed.join(', ')}${shown > MAX_CANDIDATES ? ', ...' : ''}.`,
    { details: { matches: shown, candidates: texts.map((text, i) => ({ selector: `${given} >> nth=${i}`, text })) } },
  );
}

/** A point inside the viewport, or `invalid_argument` naming the viewport's size. */
export async function checkPoint(session: Session, point: Point): Promise<Point> {
  const size =
    session.page.viewportSize() ??
    (await bounded(
      session.page.evaluate(() => ({ width: innerWidth, height: innerHeight })),
      DEFAULT_CALL_TIMEOUT_MS,
      'measuring the viewport',
    ));
  if (point.x < 0 || point.y < 0 || point.x >= size.width || point.y >= size.height)
    throw new ServiceError(
      'invalid_argument',
      `The point (${point.x}, ${point.y}) is outside the viewport (${size.width} x ${size.height} CSS pixels); coordinates are viewport CSS pixels, as a screenshot at scale 1 shows them.`,
    );
  return point;
}

/**
 * What is drawn at a point of the viewport, for the result's message: `button "Save"`, `canvas`. Asked over CDP, out
 * of the page's reach; '' when nothing answers.
 */
export async function describePoint(session: Session, point: Point): Promise<string> {
  try {
    const cdp = await pageSession(session.watched, DEFAULT_CALL_TIMEOUT_MS);
    const { backendNodeId } = await cdp.send<{ backendNodeId: number }>('DOM.getNodeForLocation', {
      x: Math.round(point.x),
      y: Math.round(point.y),
      includeUserAgentShadowDOM: false,
    });
    const worlds = await frameWorlds(cdp);
    const { object } = await cdp.send<{ object: { objectId?: string } }>('DOM.resolveNode', {
      backendNodeId,
      executionContextId: worlds.utility,
    });
    if (!object.objectId) return '';
    const { result } = await cdp.send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', {
      objectId: object.objectId,
      functionDeclaration: `function () {
        const el = this.nodeType === 1 ? this : this.parentElement;
        if (!el) return '';
        const text = (el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') || '').replace(/\\s+/g, ' ').trim();
        return { tag: el.localName, text };
      }`,
      returnByValue: true,
    });
    await cdp.send('Runtime.releaseObject', { objectId: object.objectId }).catch(() => undefined);
    const found = result.value as { tag: string; text: string } | '';
    if (!found) return '';
    // The page's background says nothing of what is drawn there.
    if (found.tag === 'html' || found.tag === 'body') return '';
    // Page words in an answer: the session's secrets masked, as in the page text.
    return found.text ? `${found.tag} ${JSON.stringify(session.recording.secrets.mask(clip(found.text)))}` : found.tag;
  } catch {
    return '';
  }
}

function clip(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > MAX_TEXT ? `${one.slice(0, MAX_TEXT - 1)}…` : one;
}

function firstLine(err: unknown): string {
  return String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .replace(/^locator\.count: /, '');
}
