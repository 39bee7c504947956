import { errors as playwrightErrors } from 'playwright-core';
import { ServiceError } from '../errors.js';
import { READ_AGAIN } from '../snapshot/refs.js';
import type { Cover, Point } from './target.js';

/** Playwright's words for "this method does not apply to this element". */
const MISFIT = [
  /Element is not an? </,
  /not an? <input>/i,
  /does not have a role allowing/,
  /Not a checkbox or radio button/,
  /Cannot type text into input\[type=/,
  /Input of type "[^"]*" cannot be filled/,
  /Node is not an? HTMLInputElement/,
  /Non-multiple file input can only accept single file/,
  /Element is not a <select> element/,
  /did not change its state/,
  /Unknown key:/,
  /Malformed value/,
  /Cannot set input files/,
];

/** Call-log lines that say what kept an element from being acted on, most telling first. */
const BLOCKERS: Array<[RegExp, (line: string) => string]> = [
  [/intercepts pointer events/, (line) => `${line} (another element covers it)`],
  [/element is not visible/, () => 'it stayed hidden (not visible)'],
  [/element is not enabled|element is disabled/, () => 'it stayed disabled'],
  [/element is not editable/, () => 'it is not editable (readonly)'],
  [/element is not stable/, () => 'it kept moving (an animation)'],
  [/outside of the viewport/, () => 'it is outside of the viewport and cannot be scrolled into it'],
  [/did not find some options/, () => 'the select has no option with that value or label'],
];

export interface Attempt {
  method: string;
  /** `[0-5] button "Pay"` or "the page". */
  target: string;
  timeoutMs: number;
}

/** One clear ServiceError for what went wrong while acting, instead of Playwright's multi-line call log. */
export function actionError(err: unknown, attempt: Attempt): ServiceError {
  if (err instanceof ServiceError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const first = firstLine(message);
  if (err instanceof playwrightErrors.TimeoutError) return timeoutError(err, message, attempt);
  if (MISFIT.some((pattern) => pattern.test(message)))
    return new ServiceError('invalid_argument', `${attempt.method} does not fit ${attempt.target}: ${first}`, { cause: err });
  if (/Target (page, context or browser )?(has been |was )?closed|crash/i.test(message))
    return new ServiceError('page_crashed', `The page closed or crashed during ${attempt.method}. Navigate again to continue.`, {
      cause: err,
    });
  if (/net::ERR_/.test(message))
    return new ServiceError('navigation_failed', `${attempt.method} started a navigation that failed: ${first}`, { cause: err });
  return new ServiceError('internal', `${attempt.method} on ${attempt.target} failed: ${first}`, { cause: err });
}

/**
 * Where a pointer action stood when its timeout ran out, from Playwright's call log: `done` (it happened; only the wait
 * for a navigation it started was left), `acting` (cut off while the input events went out), `covered` (another element
 * took the pointer at its last try), `outside` (its box stayed out of the viewport, scrolled or not), `waiting` (for
 * the element to show, be enabled or stop moving). Undefined for anything but a timeout.
 */
export type PointerHold = 'done' | 'acting' | 'covered' | 'outside' | 'waiting';

export function pointerHold(err: unknown): PointerHold | undefined {
  if (!(err instanceof playwrightErrors.TimeoutError)) return undefined;
  const log = callLog(err.message);
  if (log.some((line) => /^\w+ action done$/.test(line))) return 'done';
  const lastTry = log.findLastIndex((line) => /^(attempting|retrying) \w+ action/.test(line));
  const tried = log.slice(Math.max(lastTry, 0));
  const performing = tried.findLastIndex((line) => /^performing /.test(line));
  if (performing >= 0 && !tried.slice(performing).some((line) => BLOCKERS[0]![0].test(line))) return 'acting';
  const blocker = log.findLast((line) => BLOCKERS.some(([pattern]) => pattern.test(line))) ?? '';
  return BLOCKERS[0]![0].test(blocker) ? 'covered' : /outside of the viewport/.test(blocker) ? 'outside' : 'waiting';
}

/** Playwright's own words for what covered the element, `<div class="overlay">…</div>`, from its call log. */
export function interceptorOf(err: unknown): string | undefined {
  const line = callLog(err instanceof Error ? err.message : String(err)).findLast((entry) => BLOCKERS[0]![0].test(entry));
  return line?.replace(/ intercepts pointer events$/, '');
}

/**
 * `element_covered`: at the point an action would press, another element (or none, the page itself) takes the pointer,
 * and has for the grace a fading cover gets. Says what covers the target, as the page text names it, and what to do.
 */
export function coveredError(attempt: Attempt, cover: Cover): ServiceError {
  const at = (point: Point) => `(${Math.round(point.x)}, ${Math.round(point.y)})`;
  const keys = 'or use the keyboard (focus it, arrow keys, Enter)';
  const message =
    cover.kind === 'element'
      ? `${cover.cover} covers ${attempt.target}${cover.inside.length ? ` (in it: ${cover.inside.join(', ')})` : ''}, so ${attempt.method} did not happen. ` +
        `Close or answer it first, or wait for it to go${cover.layer ? '' : '; if it draws the control itself, act on it instead'}.`
      : cover.kind === 'pointer-events'
        ? `${attempt.target} does not take the pointer (pointer-events: none${cover.source ? ` on ${cover.source}` : ''}): ${attempt.method} at ${at(cover.at)} ` +
          `would reach what is behind it, so it did not happen. Act on the element that takes clicks there, ${keys}.`
        : cover.kind === 'outside'
          ? `${attempt.target} lies outside the viewport at ${at(cover.at)}, and scrolling does not bring it in (a clipped or transformed ` +
            `container), so ${attempt.method} did not happen. Scroll its container first, ${keys}.`
          : `Nothing of ${attempt.target} is drawn at its centre ${at(cover.at)}: it is not where its box says (a zero-size, transformed or ` +
            `clipped container), so ${attempt.method} did not happen. Act where a screenshot shows it (x, y), ${keys}.`;
  return new ServiceError('element_covered', message, {
    details: {
      cover: cover.kind === 'element' ? cover.cover : cover.kind,
      ...(cover.kind === 'element' && cover.ref ? { coverRef: cover.ref } : {}),
    },
  });
}

/** Playwright's call log, a line per entry, without its dimming (ANSI codes), bullets and repeat counts. */
function callLog(message: string): string[] {
  return stripAnsi(message)
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/^-\s*/, '')
        .replace(/^\d+ × /, ''),
    );
}

function timeoutError(err: Error, message: string, attempt: Attempt): ServiceError {
  const log = callLog(message);
  if (/page\.(goBack|goForward|reload)/.test(message))
    return new ServiceError('navigation_timeout', `${attempt.method} did not finish loading within the timeout: ${firstLine(message)}`, {
      cause: err,
    });
  for (const [pattern, say] of BLOCKERS) {
    const line = [...log].reverse().find((entry) => pattern.test(entry));
    if (line)
      return new ServiceError(
        'action_timeout',
        `${attempt.method} on ${attempt.target} did not happen within ${attempt.timeoutMs} ms: ${say(line)}. Wait for the page, or act on what is in the way first.`,
        { cause: err },
      );
  }
  // The element was never found: it left the page after its ref was resolved.
  if (!log.some((entry) => /locator resolved to/.test(entry)))
    return new ServiceError(
      'ref_not_found',
      `${attempt.target} is no longer on the page (it changed since the ref was read); ${READ_AGAIN}`,
      { cause: err },
    );
  const last = log.filter(Boolean).pop() ?? '';
  return new ServiceError(
    'action_timeout',
    `${attempt.method} on ${attempt.target} did not happen within ${attempt.timeoutMs} ms (${last}).`,
    {
      cause: err,
    },
  );
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

function firstLine(message: string): string {
  return message
    .split('\n')[0]!
    .replace(/^\w+\.\w+: /, '')
    .replace(/^Error: /, '')
    .trim();
}
