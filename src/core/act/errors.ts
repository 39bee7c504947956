import { errors as playwrightErrors } from 'playwright-core';
import { ServiceError } from '../errors.js';

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

interface Attempt {
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

function timeoutError(err: Error, message: string, attempt: Attempt): ServiceError {
  // Playwright dims its call log with ANSI codes; a message for a caller carries none.
  const log = stripAnsi(message)
    .split('\n')
    .map((line) =>
      line
        .trim()
        .replace(/^-\s*/, '')
        .replace(/^\d+ × /, ''),
    );
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
      `${attempt.target} is no longer on the page (it changed since the ref was read); read the page again to get fresh refs.`,
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
