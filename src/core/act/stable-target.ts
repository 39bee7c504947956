import type { Locator } from 'playwright-core';
import { bounded } from '../page/cdp.js';
import { MAX_STEP_SELECTOR, type RunStep } from '../recording/index.js';
import { stateKey, type Session, type WatchedPage } from '../sessions.js';

/** Longest the description of a target may take: a page stuck in a script gets none, and the action goes on. */
const DESCRIBE_MS = 1_000;

export type StableTarget = NonNullable<RunStep['target']>;

/** Whether a target was described on this page (tab) yet: only then are its next documents readied (warmTargets). */
const DESCRIBED = stateKey('act.described', () => ({ yet: false }));

/**
 * The element as a locator that survives a reload: Playwright's `normalize()`, which writes what codegen writes
 * (getByRole with its name, getByLabel, getByPlaceholder, getByText, getByTestId, then CSS) and only a locator that
 * matches that one element in the page now (its generator tries each against the page); `description` is how the
 * page text named it. Undefined when none can be made in time, or when it would name a secret the session has seen.
 */
export async function stableTarget(session: Session, element: Locator, description: string | undefined): Promise<StableTarget | undefined> {
  session.watched.state.get(DESCRIBED).yet = true;
  try {
    const normalized = await bounded(element.normalize(), DESCRIBE_MS, 'describing the target');
    const selector = selectorOf(normalized);
    if (!selector || selector.length > MAX_STEP_SELECTOR || session.recording.secrets.mask(selector) !== selector) return undefined;
    // A locator by position ("the fifth button") would act on another element once the page differs: a row's text holds it.
    const scoped = POSITIONAL.test(selector) ? await bounded(inItsRow(session, element), DESCRIBE_MS, 'describing the target') : undefined;
    const kept = scoped && session.recording.secrets.mask(scoped.selector) === scoped.selector ? scoped : undefined;
    // A target given by selector is described by its locator: `getByRole('button', { name: 'Save' })`.
    return { selector: kept?.selector ?? selector, description: description ?? kept?.code ?? normalized.toString() };
  } catch {
    return undefined;
  }
}

/**
 * Readies each loaded document of a page that has been acted on for `stableTarget`: Playwright's locator generator is
 * installed in a document at its first use, about 40 ms, which would otherwise fall on the document's first act.
 * Started when the document loads, it is done by the time a caller has read the page; a page never acted on (read
 * only) is not charged for it, and one that never answers only keeps it pending.
 */
export function warmTargets(watched: WatchedPage): void {
  watched.page.on('load', () => {
    if (!watched.state.get(DESCRIBED).yet) return;
    watched.page
      .locator(':root')
      .normalize()
      .catch(() => undefined);
  });
}

/** Playwright's locators that pick an element by its place among others: `>> nth=4`, `div:nth-child(2) > .switch`. */
const POSITIONAL = /(^|>> )nth=|:nth-(child|of-type)\(/;
/** How far up a positional target's row is looked for, and the longest text of it a locator repeats. */
const ROW_LEVELS = 6;
const MAX_ROW_TEXT = 80;

/** What an element and its ancestors show of themselves, read in the page: tag and class, and the first line of text. */
interface Shape {
  css: string;
  /** Its first lines of text (of more than two characters), each at most MAX_ROW_TEXT. */
  lines: string[];
}

/**
 * The element as "the <its kind> that says <text>", or "the <its kind> in the <row> that says <text>" (Playwright's
 * `filter({hasText})`), for a target codegen could only place by position (an unnamed trash button in a list of
 * contacts). The first such locator that finds it alone, and the element itself, wins; undefined when none does.
 */
async function inItsRow(session: Session, element: Locator): Promise<{ selector: string; code: string } | undefined> {
  // No named function inside: the page gets this function's source alone, without a bundler's helpers.
  const shapes = await element.evaluate(
    (el, { levels, maxText }) => {
      const found: Array<{ css: string; lines: string[] }> = [];
      for (let node: Element | null = el, i = 0; node && i <= levels; node = node.parentElement, i++) {
        const name = [...node.classList].find((item) => /^[A-Za-z][\w-]*$/.test(item));
        const lines = ((node as HTMLElement).innerText ?? '')
          .split('\n')
          .map((text) => text.replace(/\s+/g, ' ').trim().slice(0, maxText))
          .filter((text) => text.length > 2)
          .slice(0, 3);
        found.push({ css: `${node.localName}${name ? `.${name}` : ''}`, lines });
      }
      return found;
    },
    { levels: ROW_LEVELS, maxText: MAX_ROW_TEXT },
  );
  const [own, ...rows] = shapes as Shape[];
  // The element by its own words first (a row that is itself the button), then inside the nearest row that says something else.
  const candidates = [
    ...own!.lines.map((line) => `css=${own!.css} >> internal:has-text=${wholeWords(line)}`),
    ...rows.flatMap((row) =>
      row.lines
        .filter((line) => !own!.lines.includes(line))
        .map((line) => `css=${row.css} >> internal:has-text=${wholeWords(line)} >> css=${own!.css}`),
    ),
  ];
  const handle = await element.elementHandle();
  try {
    for (const selector of candidates) {
      const candidate = session.page.locator(selector);
      if ((await candidate.count()) !== 1) continue;
      if (await candidate.evaluate((found, target) => found === target, handle)) return { selector, code: candidate.toString() };
    }
    return undefined;
  } finally {
    await handle?.dispose();
  }
}

/**
 * A text filter that matches the line as words, case and all: "Eli Sandoval" finds neither "Deli Sandoval" nor
 * "Eli Sandoval-Reyes" (Playwright's `hasText` string would find both).
 */
function wholeWords(line: string): string {
  return `/(^|\\s)${line.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(\\s|$)/`;
}

/** The selector a locator stands for (`internal:role=button[name="Save"i]`): what `page.locator()` takes back. */
function selectorOf(locator: Locator): string | undefined {
  // Playwright keeps it in a field of the locator; `toString()` is the same selector written as JavaScript.
  const selector = (locator as unknown as { _selector?: unknown })._selector;
  return typeof selector === 'string' ? selector : undefined;
}
