import type { Locator } from 'playwright-core';
import { z } from 'zod';
import { cancelledError, ServiceError } from '../errors.js';
import { pageSession } from '../page/cdp.js';
import type { Session } from '../sessions.js';
import { resolveRef } from '../snapshot/index.js';
import { withTimeout } from '../time.js';

export const EVALUATE_DEFAULT_TIMEOUT_MS = 10_000;
export const EVALUATE_MAX_TIMEOUT_MS = 60_000;
/** Longest result answered whole, in characters of JSON; a longer one answers its first part, `truncated: true`. */
export const EVALUATE_MAX_RESULT_CHARS = 64 * 1024;
/** Longest JSON a page may hand back at all (a longer result is an error: the page is asked for less). */
const MAX_PAGE_JSON_CHARS = 1024 * 1024;
/** Results are cut below this depth, as the action log cuts arguments. */
const MAX_DEPTH = 100;
const TOO_DEEP = '[nested too deep]';
/** How long a page that may be looping gets to answer a trivial script before its script is terminated. */
const LOOP_PROBE_MS = 500;
/** Longest page message an error carries. */
const MAX_MESSAGE = 500;

export const EvaluateRequest = z
  .object({
    expression: z
      .string()
      .min(1)
      .max(100_000)
      .describe('An expression ("document.title") or a function ("async (arg) => ...", "(el, arg) => ..." with ref).'),
    ref: z.string().min(1).optional().describe("From the page text: the function's first argument."),
    arg: z.unknown().optional().describe('JSON argument of the function.'),
    timeoutMs: z
      .number()
      .int()
      .min(1)
      .max(EVALUATE_MAX_TIMEOUT_MS)
      .optional()
      .describe(`Stop the script after, ms (default ${EVALUATE_DEFAULT_TIMEOUT_MS}).`),
  })
  .strict();
export type EvaluateRequest = z.infer<typeof EvaluateRequest>;

export const EvaluateResult = z.object({
  result: z
    .unknown()
    .describe(
      `The value as JSON (undefined: null, BigInt: a string, a DOM node: "<tag#id>"); with truncated, the first ${EVALUATE_MAX_RESULT_CHARS} characters of its JSON text.`,
    ),
  truncated: z.literal(true).optional().describe(`The JSON was longer than ${EVALUATE_MAX_RESULT_CHARS} characters.`),
});
export type EvaluateResult = z.infer<typeof EvaluateResult>;

/** What the script in the page hands back: its value as JSON text, or why there is none. */
type PageAnswer = { json: string } | { tooLong: number } | { thrown: string } | { unserialisable: string };

interface PageCall {
  source: string;
  arg: unknown;
  maxChars: number;
}

/**
 * Runs in the page's main world (Playwright sends its source, so it uses nothing of this module): the caller's source
 * evaluated, called when it is a function (with the element first when there is one), awaited, and its value as JSON.
 */
async function inPage(...args: [PageCall] | [Element, PageCall]): Promise<PageAnswer> {
  // No named functions inside: tsx and vitest would wrap them in a helper the page does not have.
  const [element, { source, arg, maxChars }] = args.length === 2 ? args : [undefined, args[0]];
  let stage: 'thrown' | 'unserialisable' = 'thrown';
  try {
    // The caller's script is the point: an indirect eval, in the page's global scope, as Playwright's own evaluate does.
    let value: unknown = (0, eval)(`(${source.trim().replace(/;+$/, '')}\n)`);
    if (typeof value === 'function') value = element ? value(element, arg) : value(arg);
    value = await value;
    stage = 'unserialisable';
    const json =
      JSON.stringify(value, (_key, item: unknown) => {
        if (typeof item === 'bigint') return item.toString();
        if (item instanceof Element) return `<${item.localName}${item.id ? `#${item.id}` : ''}>`;
        if (item instanceof Node) return item.nodeName;
        return item;
      }) ?? 'null';
    return json.length > maxChars ? { tooLong: json.length } : { json };
  } catch (err) {
    let text: string;
    try {
      text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    } catch {
      text = 'a value that cannot be shown';
    }
    return stage === 'thrown' ? { thrown: text } : { unserialisable: text };
  }
}

/**
 * Runs the caller's script in the session's page (on a ref's element when given) and answers its JSON value, the
 * session's secrets masked. A script still running at `timeoutMs` is stopped: a loop is terminated, and the page is
 * replaced before the next operation if it still does not answer.
 */
export async function evaluate(session: Session, req: EvaluateRequest, signal?: AbortSignal): Promise<EvaluateResult> {
  const timeoutMs = req.timeoutMs ?? EVALUATE_DEFAULT_TIMEOUT_MS;
  const locator = req.ref ? await resolveRef(session, req.ref) : undefined;
  const call: PageCall = { source: req.expression, arg: req.arg ?? null, maxChars: MAX_PAGE_JSON_CHARS };
  const running = runInPage(session, locator, call, timeoutMs);
  running.catch(() => undefined);
  const mask = (text: string) => session.recording.secrets.mask(text);
  let answer: PageAnswer;
  try {
    answer = await withTimeout(Promise.race([running, session.watched.crash, aborted(signal)]), timeoutMs, () => new Deadline());
  } catch (err) {
    if (err instanceof Deadline || (err instanceof ServiceError && err.code === 'cancelled')) {
      const looped = await stopScript(session);
      throw err instanceof ServiceError ? err : timeoutError(timeoutMs, looped);
    }
    throw err instanceof ServiceError ? err : notRun(err, mask);
  }
  // Read with care: the page's own globals (String, JSON) took part in making it.
  const { json, thrown, unserialisable, tooLong } = (answer ?? {}) as Partial<Record<'json' | 'thrown' | 'unserialisable', unknown>> & {
    tooLong?: unknown;
  };
  if (thrown !== undefined) {
    const text = clip(mask(firstLine(thrown)));
    // Statements are not an expression: the way out is a function.
    const hint = text.startsWith('SyntaxError') ? ' (statements go in a function: "() => { ...; return value; }")' : '';
    throw new ServiceError('evaluation_failed', `The script threw ${text}${hint}`);
  }
  if (unserialisable !== undefined)
    throw new ServiceError(
      'evaluation_failed',
      `The script's value cannot be sent as JSON (${clip(mask(firstLine(unserialisable)))}); return plain data, e.g. a few of its fields.`,
    );
  if (tooLong !== undefined)
    throw new ServiceError(
      'evaluation_failed',
      `The script's value is ${String(tooLong)} characters of JSON, over the ${MAX_PAGE_JSON_CHARS} a page may send; return less (a part, a count).`,
    );
  return answerOf(parsed(json), mask);
}

function timeoutError(timeoutMs: number, looped: boolean): ServiceError {
  return new ServiceError(
    'timeout',
    `The script did not finish within ${timeoutMs} ms and was stopped (${looped ? 'it kept the page busy: a loop was terminated' : 'it was still waiting'}); ` +
      `make it finish sooner, or pass a longer timeoutMs (at most ${EVALUATE_MAX_TIMEOUT_MS}).`,
    { details: { timeoutMs } },
  );
}

/** Playwright could not run the script or bring its answer back (a navigation, a closed frame). */
function notRun(err: unknown, mask: (text: string) => string): ServiceError {
  const line = firstLine(err);
  if (/Execution context was destroyed/.test(line))
    return new ServiceError(
      'evaluation_failed',
      'The page navigated away while the script ran, so its value is lost; read the page again.',
      {
        cause: err,
      },
    );
  return new ServiceError('evaluation_failed', `The script could not run: ${clip(mask(line))}`, { cause: err });
}

/** The page's JSON text as a value; a page that replaced JSON.stringify may hand back anything. */
function parsed(json: unknown): unknown {
  try {
    if (typeof json === 'string') return JSON.parse(json) as unknown;
  } catch {
    // Said below.
  }
  throw new ServiceError(
    'evaluation_failed',
    "The script's value came back as something that is not JSON (the page replaced JSON.stringify?).",
  );
}

/** The value as answered: secrets masked in keys, strings and numbers; cut to its first JSON characters when long. */
function answerOf(value: unknown, mask: (text: string) => string): EvaluateResult {
  const result = masked(value, mask, 0);
  const json = JSON.stringify(result);
  if (json.length <= EVALUATE_MAX_RESULT_CHARS) return { result };
  // Cut after masking: every secret in the text is already its label, so no part of one can show.
  return { result: json.slice(0, EVALUATE_MAX_RESULT_CHARS), truncated: true };
}

function masked(value: unknown, mask: (text: string) => string, depth: number): unknown {
  if (depth > MAX_DEPTH) return TOO_DEEP;
  if (typeof value === 'string') return mask(value);
  // A secret of digits (a PIN) read back as a number.
  if (typeof value === 'number') return mask(String(value)) === String(value) ? value : mask(String(value));
  if (Array.isArray(value)) return value.map((item) => masked(item, mask, depth + 1));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [mask(key), masked(item, mask, depth + 1)]));
  return value;
}

function runInPage(session: Session, locator: Locator | undefined, call: PageCall, timeoutMs: number): Promise<PageAnswer> {
  // One function for both: Playwright calls it with the element first on a locator, with the argument alone on a page.
  const script = inPage as unknown as (arg: PageCall) => Promise<PageAnswer>;
  return locator
    ? locator.evaluate(inPage as unknown as (element: Element, arg: PageCall) => Promise<PageAnswer>, call, { timeout: timeoutMs })
    : session.page.evaluate(script, call);
}

/**
 * A script still running at its deadline: when the page does not answer a trivial script at once, the script holds
 * its thread (a loop) and is terminated, so the page and its state stay. The page is checked again before the next
 * operation and replaced if it still does not answer. Resolves whether a script was terminated.
 */
async function stopScript(session: Session): Promise<boolean> {
  let terminated = false;
  try {
    const cdp = await pageSession(session.watched, LOOP_PROBE_MS);
    const answers = await cdp.send('Runtime.evaluate', { expression: '1', returnByValue: true }).then(
      () => true,
      () => false,
    );
    if (!answers) {
      await cdp.send('Runtime.terminateExecution').catch(() => undefined);
      terminated = true;
    }
  } catch {
    // The page does not even give a CDP session: the check below replaces it.
  }
  session.checkResponsive();
  return terminated;
}

class Deadline extends Error {}

function aborted(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    signal?.addEventListener('abort', () => reject(cancelledError()), { once: true });
  });
}

function firstLine(err: unknown): string {
  let text: string;
  try {
    text = err instanceof Error ? err.message : String(err);
  } catch {
    text = 'a value that cannot be shown';
  }
  return text
    .split('\n')[0]!
    .replace(/^(locator|page)\.evaluate: /, '')
    .trim();
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 1)}…` : text;
}
