import { errors as playwrightErrors, type Locator, type Page } from 'playwright-core';
import { DEFAULTS } from '../config.js';
import { abortable, ServiceError, throwIfAborted } from '../errors.js';
import { checkUrl, navigate, type NavigatePolicy } from '../navigate.js';
import { sleep } from '../time.js';
import type { Session } from '../sessions.js';
import { bounded } from '../page/cdp.js';
import { resolveRef } from '../snapshot/index.js';
import { isPasswordRef, refTarget, unknownRefError } from '../snapshot/refs.js';
import { INPUT_FORMATS } from '../snapshot/walker/types.js';
import { Variables } from '../variables.js';
import { dateReadings } from './dates.js';
import { actionError, coveredError, interceptorOf, pointerHold, type PointerHold } from './errors.js';
import { typeAtEnd } from './keys.js';
import { ELEMENT_METHODS, MAX_UPLOAD_BYTES, METHOD_ARGUMENTS, PAGE_METHODS, POINT_METHODS, type Action, type ActMethod } from './schema.js';
import { checkPoint, coverOf, describePoint, refWords, resolveSelector, type Point } from './target.js';
import { checkVariables } from './origins.js';
import { stableTarget, type StableTarget } from './stable-target.js';

/** Default longest wait for an element to become actionable. */
export const ACTION_TIMEOUT_MS = 10_000;
/**
 * How long a pointer action waits at a time before act looks at what holds it up: another element covering the target
 * is then said at once, not after the whole timeout. With COVER_CONFIRM_MS, the grace a fading cover gets.
 */
const COVER_SLICE_MS = 800;
/** How long a trial of the action may take to find the cover gone after a slice that ended covered. */
const COVER_CONFIRM_MS = 300;
/** Longest read of the focused field around a click (a page stuck in a script never answers). */
const FOCUS_READ_MS = 1_000;
/** After an action that may navigate, how long to wait for the new page to load. */
const LOAD_AFTER_ACTION_MS = 5_000;
/** How long a wait for text looks at a time before it checks whether the call was cancelled. */
const WAIT_SLICE_MS = 500;
/** How long fill, selectOption and upload wait for their element at a time before they check the same. */
const ACTION_SLICE_MS = 1_000;
/** Most characters of a text the caller gave (a selector, a text to wait for) that a message repeats. */
const MAX_ECHO_CHARS = 200;

export interface PerformOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Fills %name% placeholders in the arguments just before acting. */
  variables?: Variables;
  /** Which URLs newTab may open (navigate's policy). */
  policy?: NavigatePolicy;
  /** The target as a locator that survives a reload, when the caller knows it (replay): not described again. */
  target?: StableTarget;
  /** Settles before the action itself starts (the settle's mark): the target is described meanwhile. */
  ready?: Promise<unknown>;
}

export interface Performed {
  /** One sentence for the caller or a model; values of variables stay placeholders. */
  message: string;
  /** The element as the page text names it, e.g. `button "Sign in"`, or the page. */
  description: string;
  /** The element as a locator that survives a reload (a session's script, replay), when one could be made. */
  target?: StableTarget;
  /** dragTo's drop target, the same way. */
  dropTarget?: StableTarget;
}

interface Step {
  method: ActMethod;
  session: Session;
  page: Page;
  /** Undefined for an action on the page as a whole, or on a selector or a point. */
  ref: string | undefined;
  /** The point acted at, when the action gave coordinates instead of an element. */
  point: Point | undefined;
  /** The action names an element (a ref or a selector). */
  onElement: boolean;
  element: () => Promise<Locator>;
  args: Record<string, unknown>;
  /** The arguments as given, for messages: placeholders, not values. */
  shown: Record<string, unknown>;
  target: string;
  timeout: number;
  signal?: AbortSignal;
  policy: NavigatePolicy;
}

/** An action's target and arguments as given, checked without the page: `invalid_argument` when they cannot work. */
export function checkAction(action: Action): { ref?: string; selector?: string; point?: Point; shown: Record<string, unknown> } {
  const { method } = action;
  const onPage = PAGE_METHODS.has(method);
  const ref = onPage ? undefined : action.ref?.trim().replace(/^\[|\]$/g, '') || undefined;
  const selector = onPage ? undefined : action.selector?.trim() || undefined;
  const point = onPage ? undefined : pointOf(action);
  const targets = [ref, selector, point].filter((target) => target !== undefined).length;
  if (targets > 1) throw new ServiceError('invalid_argument', 'Give one of ref, selector or x and y, not several.');
  if (point && !POINT_METHODS.has(method))
    throw new ServiceError('invalid_argument', `${method} acts on an element: give its ref or a selector, not x and y.`);
  if (ELEMENT_METHODS.has(method) && !targets)
    throw new ServiceError(
      'invalid_argument',
      `${method} needs an element: its ref from the page text, a selector${POINT_METHODS.has(method) ? ', or x and y' : ''}.`,
    );
  return { ref, selector, point, shown: checkArguments(method, action.arguments ?? {}) };
}

/** Performs one action on the session's page; the one implementation behind act and the agent's browser tools. */
export async function performAction(session: Session, action: Action, options: PerformOptions = {}): Promise<Performed> {
  const { method } = action;
  const { ref, selector, point, shown } = checkAction(action);
  const variables = options.variables ?? new Variables();
  const args = checkArguments(method, variables.substituteDeep(action.arguments ?? {}) as Record<string, unknown>);
  checkVariables(session, action, variables, args);
  const timeout = options.timeoutMs ?? ACTION_TIMEOUT_MS;
  if (point) await checkPoint(session, point);
  const description = ref
    ? describeRef(session, ref)
    : selector
      ? `selector ${JSON.stringify(selector)}`
      : point
        ? `the point (${point.x}, ${point.y})${await describePoint(session, point).then((what) => (what ? `, ${what}` : ''))}`
        : 'the page';
  let resolved: Promise<Locator> | undefined;
  const element = () => (resolved ??= selector ? resolveSelector(session, selector, timeout) : resolveRef(session, ref!));
  // Described before the action, which may take the element away (a Delete button); a failed lookup is the method's to say.
  const target =
    options.target ??
    (ref || selector
      ? await element().then(
          (found) => stableTarget(session, found, ref ? description : undefined),
          () => undefined,
        )
      : undefined);
  const dropTarget = method === 'dragTo' ? await dropTargetOf(session, args) : undefined;
  const step: Step = {
    method,
    session,
    page: session.page,
    ref,
    point,
    onElement: Boolean(ref ?? selector),
    element,
    args,
    shown,
    target: ref ? `[${ref}] ${description}` : description,
    timeout,
    signal: options.signal,
    policy: options.policy ?? { allowFileUrls: false },
  };
  await options.ready;
  try {
    // The call's cancel answers at once; what the method still has under way stops at its next check of the signal.
    const message = await abortable(METHODS[method](step), options.signal);
    return {
      message: variables.redact(message),
      description,
      ...(target ? { target } : {}),
      ...(dropTarget ? { dropTarget } : {}),
    };
  } catch (err) {
    // A page that held the action past its timeout is freed before the error is answered (and the error says how).
    throw await session.pages.recoverAfterTimeout(actionError(err, { method, target: step.target, timeoutMs: timeout }));
  }
}

/** dragTo's drop target given by ref, as a locator that survives a reload. */
async function dropTargetOf(session: Session, args: Record<string, unknown>): Promise<StableTarget | undefined> {
  const ref = typeof args.targetRef === 'string' ? args.targetRef.replace(/^\[|\]$/g, '') : undefined;
  if (!ref) return undefined;
  const target = refTarget(session, ref);
  if (!target) return undefined;
  return resolveRef(session, ref).then(
    (found) => stableTarget(session, found, refWords(target)),
    () => undefined,
  );
}

function checkArguments(method: ActMethod, given: Record<string, unknown>): Record<string, unknown> {
  const parsed = METHOD_ARGUMENTS[method].safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${['arguments', ...issue.path].join('.')}: ${issue.message}`).join('; ');
    throw new ServiceError('invalid_argument', `Invalid arguments for ${method}: ${issues}`, { details: { issues: parsed.error.issues } });
  }
  return parsed.data as Record<string, unknown>;
}

/** `button "Sign in"` from the latest page text; an unknown ref is `ref_not_found`. */
function describeRef(session: Session, ref: string): string {
  const target = refTarget(session, ref);
  if (!target) throw unknownRefError(ref);
  return refWords(target);
}

/** How Playwright is asked for a pointer action: within `timeout`, for real or as a trial (its checks alone). */
type PointerRun = (options: { timeout: number; trial?: boolean }) => Promise<void>;

/**
 * A pointer action (click, hover, ...) on an element, which Playwright does once the element is visible, stable,
 * enabled and what the pointer would hit. It waits in slices of COVER_SLICE_MS: when one ends with another element
 * taking the pointer (or the element out of the viewport), and a trial finds it still so, the action is refused at
 * once (`element_covered`, naming the cover) instead of waiting out the timeout; a cover that goes meanwhile (a fading
 * overlay) is waited out. Nothing is ever forced.
 */
async function pointerAction(s: Step, element: Locator, run: PointerRun): Promise<void> {
  const deadline = Date.now() + s.timeout;
  for (;;) {
    throwIfAborted(s.signal);
    const left = deadline - Date.now();
    const last = left <= COVER_SLICE_MS + COVER_CONFIRM_MS;
    try {
      return await run({ timeout: last ? Math.max(left, 1) : COVER_SLICE_MS });
    } catch (err) {
      const hold = pointerHold(err);
      // The events went out; only the wait for a navigation they started ran out (the settle that follows waits for it).
      if (hold === 'done') return;
      if (hold === 'covered' || hold === 'outside') {
        if (last || (await stillHeld(run, hold))) throw await covered(s, element, err);
      } else if (last || hold !== 'waiting') throw err;
    }
  }
}

/**
 * An action Playwright does once its element is ready (visible, enabled, editable), asked for in slices of
 * ACTION_SLICE_MS up to the step's timeout, with the call's cancel checked between: a cancelled call leaves at most one
 * slice of it behind, not a fill that lands when the field is enabled a minute later. Only for actions that give the
 * same result when done twice (fill, selectOption, setInputFiles): a slice that ran out is simply asked again.
 */
async function inSlices<T>(s: Step, run: (timeout: number) => Promise<T>): Promise<T> {
  const deadline = Date.now() + s.timeout;
  for (;;) {
    throwIfAborted(s.signal);
    const left = deadline - Date.now();
    try {
      return await run(Math.max(1, Math.min(left, ACTION_SLICE_MS)));
    } catch (err) {
      if (!(err instanceof playwrightErrors.TimeoutError) || left <= ACTION_SLICE_MS) throw err;
    }
  }
}

/** Whether a trial of the action is still held as the slice was: covered, or outside the viewport. */
function stillHeld(run: PointerRun, hold: PointerHold): Promise<boolean> {
  return run({ timeout: COVER_CONFIRM_MS, trial: true }).then(
    () => false,
    (err: unknown) => pointerHold(err) === hold,
  );
}

/** The `element_covered` error naming what covers the element; Playwright's words for it when the page does not answer. */
async function covered(s: Step, element: Locator, err: unknown): Promise<Error> {
  const attempt = { method: s.method, target: s.target, timeoutMs: s.timeout };
  const cover = await coverOf(s.session, element, s.ref);
  if (cover) return coveredError(attempt, cover);
  const said = interceptorOf(err);
  return said ? coveredError(attempt, { kind: 'element', cover: said, inside: [], layer: false }) : actionError(err, attempt);
}

/**
 * The mouse at the step's point, bounded by its timeout (plus a press-and-hold's delay): a page stuck in a script never
 * answers an input event.
 */
function withMouse(s: Step, use: (mouse: Page['mouse'], at: Point) => Promise<void>): Promise<void> {
  return bounded(use(s.page.mouse, s.point ?? { x: 0, y: 0 }), s.timeout + holdMs(s), `${s.target}: the mouse`);
}

/** How long a click holds the button down (`delay`), ms. */
function holdMs(s: Step): number {
  return (s.args.delay as number | undefined) ?? 0;
}

/** `Clicked`, `Right-clicked`, `Double-clicked`, ...: which button the click used, said as a person would. */
function clickVerb(s: Step, verb: string): string {
  const button = s.args.button as string | undefined;
  return button && button !== 'left' ? `${button[0]!.toUpperCase()}${button.slice(1)}-${verb.toLowerCase()}` : verb;
}

/** ` (held 3000 ms)` after a press and hold. */
function held(s: Step): string {
  return holdMs(s) ? `, holding the button ${holdMs(s)} ms` : '';
}

/** action.x and action.y as a point; one without the other is `invalid_argument`. */
function pointOf(action: Action): Point | undefined {
  if (action.x === undefined && action.y === undefined) return undefined;
  if (action.x === undefined || action.y === undefined)
    throw new ServiceError('invalid_argument', 'Give both x and y (viewport CSS pixels).');
  return { x: action.x, y: action.y };
}

const str = (value: unknown) => JSON.stringify(value);

/** A value typed into a password field is a secret of the session from now on: the log and the trace mask it. */
async function maskIfPassword(s: Step, password: boolean, value: string): Promise<void> {
  if (!value || !password) return;
  s.session.recording.secrets.addPassword(value);
  s.session.recording.secrets.typed();
}

/** Whether the element is a password field: as the page text read it for a ref, asked of the page for a selector. */
async function isPassword(s: Step, element: Locator): Promise<boolean> {
  if (s.ref) return isPasswordRef(s.session, s.ref);
  return (await element.getAttribute('type', { timeout: s.timeout }).catch(() => null))?.toLowerCase() === 'password';
}

const METHODS: Record<ActMethod, (step: Step) => Promise<string>> = {
  click: async (s) => {
    const focusedBefore = await focusedValue(s);
    const element = s.point ? undefined : await s.element();
    if (!element) await withMouse(s, (mouse, at) => mouse.click(at.x, at.y, s.args));
    else await pointerAction(s, element, (run) => element.click({ ...(s.args as object), ...run, timeout: run.timeout + holdMs(s) }));
    await loaded(s.page);
    const focusedAfter = await focusedValue(s);
    // A pick from a suggestion list fills the field that has focus: the result says what it holds now.
    const filled = focusedAfter && focusedAfter !== focusedBefore ? ` The focused field now holds ${str(masked(s, focusedAfter))}.` : '';
    const blocked = element ? await formBlocked(s, element, false) : '';
    // A refused form moves the focus to its first bad field: that is not a value the click put there.
    return `${clickVerb(s, 'Clicked')} ${s.target}${held(s)}.${blocked || filled}`;
  },
  dblclick: async (s) => {
    const element = s.point ? undefined : await s.element();
    if (!element) await withMouse(s, (mouse, at) => mouse.dblclick(at.x, at.y, s.args));
    else
      await pointerAction(s, element, (run) => element.dblclick({ ...(s.args as object), ...run, timeout: run.timeout + 2 * holdMs(s) }));
    await loaded(s.page);
    return `${clickVerb(s, 'Double-clicked')} ${s.target}${held(s)}.`;
  },
  fill: async (s) => {
    const element = await s.element();
    const password = await isPassword(s, element);
    await maskIfPassword(s, password, s.args.value as string);
    const { value, as } = await inFieldFormat(s, element, s.args.value as string);
    await inSlices(s, (timeout) => element.fill(value, { timeout }));
    // What the field holds is read before Enter: a form that submits (or a list that takes the entry) clears it.
    const holds = await heldValue(s, element, value, password);
    if (!s.args.submit) return `Filled ${s.target} with ${str(s.shown.value)}${as}.${holds}`;
    await element.press('Enter', { timeout: s.timeout });
    await loaded(s.page);
    return `Filled ${s.target} with ${str(s.shown.value)}${as} and pressed Enter.${holds}${await formBlocked(s, element, true)}`;
  },
  type: async (s) => {
    const element = await s.element();
    await maskIfPassword(s, await isPassword(s, element), s.args.text as string);
    await typeAtEnd(s.page, element, s.args.text as string, { timeout: s.timeout, signal: s.signal, target: s.target });
    return `Typed ${str(s.shown.text)} into ${s.target}.`;
  },
  press: async (s) => {
    const key = s.args.key as string;
    const times = (s.args.times as number | undefined) ?? 1;
    const element = s.onElement ? await s.element() : undefined;
    for (let i = 0; i < times; i++) {
      throwIfAborted(s.signal);
      if (element) await element.press(key, { timeout: s.timeout });
      else await bounded(s.page.keyboard.press(key), s.timeout, `pressing ${key}`);
    }
    await loaded(s.page);
    const on = element ? s.target : 'the focused element';
    const blocked = element && key === 'Enter' ? await formBlocked(s, element, true) : '';
    if (times === 1) return `Pressed ${key} on ${on}.${blocked}`;
    // A slider or a number field moved key by key: the result says where it ended.
    return `Pressed ${key} ${times} times on ${on}.${await valueAfter(s, element)}`;
  },
  selectOption: async (s) => {
    const element = await s.element();
    const selected = await inSlices(s, (timeout) => element.selectOption(s.args.values as string[], { timeout }));
    await loaded(s.page);
    return `Selected ${selected.map(str).join(', ')} in ${s.target}.${await heldValue(s, element, selected.join(', '), false)}`;
  },
  check: (s) => setChecked(s, true),
  uncheck: (s) => setChecked(s, false),
  hover: async (s) => {
    const element = s.point ? undefined : await s.element();
    if (!element) await withMouse(s, (mouse, at) => mouse.move(at.x, at.y));
    else await pointerAction(s, element, (run) => element.hover(run));
    return `Hovering over ${s.target}.`;
  },
  scroll: (s) => scroll(s),
  dragTo: (s) => dragTo(s),
  upload: (s) => upload(s),
  selectText: (s) => selectText(s),
  back: (s) => history(s, 'back'),
  forward: (s) => history(s, 'forward'),
  reload: async (s) => {
    await s.page.reload({ timeout: Math.max(s.timeout, DEFAULTS.navigationTimeoutMs), waitUntil: 'load' });
    return `Reloaded ${s.page.url()}.`;
  },
  wait: (s) => wait(s),
  newTab: async (s) => {
    const url = checkUrl(s.args.url as string, s.policy).href;
    const before = s.session.pages.list().find((tab) => tab.active)?.tabId;
    const tabId = await s.session.pages.open();
    try {
      await navigate(s.session, { url, options: { timeout: Math.max(s.timeout, DEFAULTS.navigationTimeoutMs) } }, s.policy, {
        signal: s.signal,
      });
    } catch (err) {
      // A refused or failed newTab leaves no tab behind (nine refusals would fill the tab limit): the one before is active again.
      await s.session.pages.close(tabId).catch(() => undefined);
      if (before !== undefined && s.session.pages.list().some((tab) => tab.tabId === before)) s.session.pages.select(before);
      throw err;
    }
    return `Opened ${s.session.page.url()} in new tab ${tabId}.`;
  },
  selectTab: async (s) => {
    s.session.pages.select(s.args.tabId as string);
    return `Selected tab ${String(s.args.tabId)} (${s.session.page.url()}).`;
  },
  closeTab: async (s) => {
    await s.session.pages.close(s.args.tabId as string);
    return `Closed tab ${String(s.args.tabId)}.`;
  },
};

/** Most invalid fields a blocked form names. */
const MAX_INVALID_FIELDS = 5;

/**
 * ` The form was not sent: "Email": Please include an '@' ...`: after an attempt to send a form (a click on its submit
 * button, Enter in one of its fields), the fields the browser's own validation refused, with the browser's messages.
 * A form that validated says nothing; so does an element that does not send a form.
 */
async function formBlocked(s: Step, element: Locator, byEnter: boolean): Promise<string> {
  // count() does not wait: an element gone with the page it sent costs nothing here.
  if ((await element.count().catch(() => 0)) === 0) return '';
  const invalid = await bounded(
    element.evaluate(
      (el, { byEnter, max }) => {
        const control = el as HTMLButtonElement | HTMLInputElement;
        const form = control.form ?? el.closest('form');
        if (!form || form.noValidate) return [];
        const sends = byEnter
          ? el instanceof HTMLInputElement
          : (el instanceof HTMLButtonElement && el.type === 'submit') ||
            (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'image'));
        if (!sends || (control as HTMLButtonElement).formNoValidate) return [];
        const fields = [...form.elements].filter(
          (field) => (field as HTMLInputElement).willValidate && !(field as HTMLInputElement).validity.valid,
        ) as HTMLInputElement[];
        return fields.slice(0, max).map((field) => ({
          name: field.labels?.[0]?.innerText.trim() || field.getAttribute('aria-label') || field.placeholder || field.name || field.type,
          message: field.validationMessage,
        }));
      },
      { byEnter, max: MAX_INVALID_FIELDS },
      { timeout: FOCUS_READ_MS },
    ),
    FOCUS_READ_MS,
    'reading the form',
  ).catch(() => []);
  if (!invalid.length) return '';
  const said = invalid.map((field) => `${str(masked(s, field.name))}: ${masked(s, field.message).replace(/\.$/, '')}`).join('; ');
  return ` The form was not sent: the browser refused ${invalid.length === 1 ? 'a field' : 'fields'}: ${said}.`;
}

/** How long the state of a checkbox is read after the click before the element counts as redrawn. */
const STATE_READ_MS = 1_000;

/**
 * check and uncheck as Playwright's do them (a click at the box, then its state read back), but a page that redraws
 * the row on change (Backbone, jQuery TodoMVC) does not turn a done click into a 10 s timeout: the box is then found
 * again by its role and name, and the answer says what the page shows now. A click is never repeated, since a second
 * one would undo the first.
 */
async function setChecked(s: Step, want: boolean): Promise<string> {
  const verb = want ? 'Checked' : 'Unchecked';
  const element = await s.element();
  if ((await element.isChecked({ timeout: s.timeout })) === want) return `${verb} ${s.target} (it already was).`;
  await pointerAction(s, element, (run) => element.click(run));
  await loaded(s.page);
  // count() does not wait: a box the page replaced is looked for again at once.
  const attached = (await element.count().catch(() => 0)) > 0;
  const after = attached ? await element.isChecked({ timeout: STATE_READ_MS }).catch(() => undefined) : undefined;
  if (after === want) return `${verb} ${s.target}.`;
  // Playwright's own words for it, mapped to an error as they were when its check() said them.
  if (after === !want) throw new Error('Clicking the checkbox did not change its state');
  // Redrawn: the page text read after the action shows the box's state in the diff either way.
  const redrawn = await redrawnState(s);
  if (redrawn === want) return `${verb} ${s.target}; the page redrew it.`;
  if (redrawn === !want) throw new Error('Clicking the checkbox did not change its state');
  return `Clicked ${s.target}; the page redrew it: the change below says whether it is ${want ? 'checked' : 'unchecked'} (another click would toggle it back).`;
}

/** The checked state of the one checkbox or radio in the page now with the ref's role and name; undefined if not one. */
async function redrawnState(s: Step): Promise<boolean | undefined> {
  const target = s.ref ? refTarget(s.session, s.ref) : undefined;
  if (!target || !target.name || s.ref!.includes('-')) return undefined;
  const role = target.role === 'radio' ? 'radio' : 'checkbox';
  const matches = s.page.getByRole(role, { name: target.name, exact: true });
  if ((await matches.count().catch(() => 0)) !== 1) return undefined;
  return matches.isChecked({ timeout: STATE_READ_MS }).catch(() => undefined);
}

async function scroll(s: Step): Promise<string> {
  const direction = s.args.direction as 'up' | 'down' | undefined;
  const screens = ((s.args.screens as number | undefined) ?? 1) * (direction === 'up' ? -1 : 1);
  if (s.onElement && !direction) {
    await (await s.element()).scrollIntoViewIfNeeded({ timeout: s.timeout });
    return `Scrolled ${s.target} into view.`;
  }
  const at = !s.onElement
    ? await s.page.evaluate((by) => {
        window.scrollBy(0, by * window.innerHeight);
        return { y: window.scrollY, height: document.documentElement.scrollHeight, view: window.innerHeight };
      }, screens)
    : await (
        await s.element()
      ).evaluate(
        (element, by) => {
          element.scrollBy(0, by * element.clientHeight);
          return { y: element.scrollTop, height: element.scrollHeight, view: element.clientHeight };
        },
        screens,
        { timeout: s.timeout },
      );
  return `Scrolled ${s.target} ${direction ?? 'down'}; now at ${Math.round(at.y)} px of ${at.height} px (${at.view} px visible).`;
}

/**
 * Drags from the element (or point) to the target: `targetRef` or `targetSelector` (at `position` inside it, or its
 * centre), or the point `x`, `y`, with the mouse: pressed, moved in steps, released (Chromium turns that into HTML5
 * drag and drop too). The drop point is taken before the drag: Playwright's own dragTo waits for the target to take
 * the pointer at the drop, which the dragged element, following the pointer, may cover (a jQuery UI draggable).
 */
async function dragTo(s: Step): Promise<string> {
  const { targetRef, targetSelector, position, x, y } = s.args as {
    targetRef?: string;
    targetSelector?: string;
    position?: Point;
    x?: number;
    y?: number;
  };
  const given = [targetRef, targetSelector, x ?? y].filter((value) => value !== undefined).length;
  if (given !== 1 || (x === undefined) !== (y === undefined))
    throw new ServiceError(
      'invalid_argument',
      'dragTo needs one target: arguments.targetRef, arguments.targetSelector, or arguments.x and y.',
    );
  const ref = targetRef?.replace(/^\[|\]$/g, '');
  const target = ref
    ? await resolveRef(s.session, ref)
    : targetSelector
      ? await resolveSelector(s.session, targetSelector, s.timeout)
      : undefined;
  const to = ref
    ? `[${ref}] ${describeRef(s.session, ref)}`
    : targetSelector
      ? `selector ${JSON.stringify(clip(targetSelector))}`
      : `the point (${x}, ${y})`;
  const at = position ? ` at (${position.x}, ${position.y}) in it` : '';
  const end = target ? await pointIn(target, position, s.timeout) : await checkPoint(s.session, { x: x!, y: y! });
  // A position far outside the target would drop nowhere, and the mouse would be moved there all the same.
  if (position)
    await checkPoint(s.session, end).catch((err: unknown) => {
      if (!(err instanceof ServiceError) || err.code !== 'invalid_argument') throw err;
      throw new ServiceError(
        'invalid_argument',
        `arguments.position (${position.x}, ${position.y}) puts the drop at (${Math.round(end.x)}, ${Math.round(end.y)}), outside the viewport; give a point inside ${to}, CSS px from its top-left.`,
      );
    });
  const element = s.point ? undefined : await s.element();
  if (element) await pointerAction(s, element, (run) => element.hover(run));
  await withMouse(s, async (mouse, at) => {
    if (s.point) await mouse.move(at.x, at.y);
    await mouse.down();
    await mouse.move(end.x, end.y, { steps: 10 });
    await mouse.up();
  });
  return `Dragged ${s.target} onto ${to}${at}.`;
}

/** A point of an element in the viewport: `position` from its top-left, or its centre; scrolled into view first. */
async function pointIn(element: Locator, position: Point | undefined, timeout: number): Promise<Point> {
  await element.scrollIntoViewIfNeeded({ timeout });
  const box = await element.boundingBox({ timeout });
  if (!box) throw new ServiceError('action_timeout', 'The drop target is not shown on the page.');
  return position ? { x: box.x + position.x, y: box.y + position.y } : { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/**
 * What fill puts in a date or time field (INPUT_FORMATS), which the browser empties without a word when given any other
 * format: a value read one way only (`March 3, 2027`) in the field's format, else `invalid_argument` naming it (`as`
 * says what was put in, for the message).
 */
async function inFieldFormat(s: Step, element: Locator, given: string): Promise<{ value: string; as: string }> {
  if (!given.trim()) return { value: given, as: '' };
  const type = await element.evaluate((el) => (el instanceof HTMLInputElement ? el.type : ''), undefined, { timeout: s.timeout });
  const format = INPUT_FORMATS[type];
  if (!format) return { value: given, as: '' };
  const readings = dateReadings(type, given);
  // A value from a variable is not spelled out in the message, converted or not.
  const plain = s.shown.value === given;
  if (readings.length === 1)
    return { value: readings[0]!, as: readings[0] === given ? '' : plain ? ` as ${str(readings[0])}` : ` in its format ${format}` };
  const why =
    readings.length > 1 && plain
      ? `${str(given)} could be ${readings.join(' or ')}`
      : `${str(s.shown.value)} cannot be read as one ${type}`;
  throw new ServiceError(
    'invalid_argument',
    `fill does not fit ${s.target}: it takes a ${type} as ${format}, and ${why}. Give it as ${format}.`,
  );
}

/**
 * What a field holds after fill or selectOption, when it is not what was asked for (a page that formats, completes or
 * refuses the value): ` It now holds "…".` Password fields and unchanged values say nothing.
 */
async function heldValue(s: Step, element: Locator, asked: string, password: boolean): Promise<string> {
  if (password) return '';
  const held = await element.inputValue({ timeout: Math.min(s.timeout, 2_000) }).catch(() => undefined);
  if (held === undefined || held === asked) return '';
  return ` It now holds ${str(masked(s, held))}.`;
}

/**
 * ` It now holds "55".`: the value of the element (or the focused one) after repeated keys: a field's value, a
 * slider's aria-valuetext or aria-valuenow. Nothing for a password field or an element without a value.
 */
async function valueAfter(s: Step, element: Locator | undefined): Promise<string> {
  const read = (el: Element | null): string | null => {
    if (!el || (el instanceof HTMLInputElement && el.type === 'password')) return null;
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return el.value;
    return el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow');
  };
  const target = element ?? s.page.locator(':focus').first();
  const value = await bounded(target.evaluate(read, undefined, { timeout: FOCUS_READ_MS }), FOCUS_READ_MS, 'reading the value').catch(
    () => null,
  );
  return value === null ? '' : ` It now holds ${str(masked(s, value))}.`;
}

/** The value of the text field that has focus ('' when none has, or it is a password field), read by Playwright. */
async function focusedValue(s: Step): Promise<string> {
  const focused = s.page.locator('input:focus:not([type=password]), textarea:focus').first();
  const read = async () => ((await focused.count()) ? focused.inputValue({ timeout: FOCUS_READ_MS }) : '');
  return bounded(read(), FOCUS_READ_MS, 'reading the focused field').catch(() => '');
}

/** A value read back from the page, as results may show it: the session's secrets masked, at most 200 characters. */
function masked(s: Step, value: string): string {
  return s.session.recording.secrets.mask(value.length > 200 ? `${value.slice(0, 199)}…` : value);
}

/**
 * Selects words inside the element, as a person drags over them: in a field or a textarea its selection range, else
 * (a contenteditable editor, any text) a DOM range over the text nodes that hold them, the element focused first. The
 * result shows what the page reports as selected.
 */
async function selectText(s: Step): Promise<string> {
  const element = await s.element();
  await element.focus({ timeout: s.timeout });
  const occurrence = (s.args.occurrence as number | undefined) ?? 1;
  const outcome = await element.evaluate(
    (el, { text, occurrence }) => {
      if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
        let at = -1;
        for (let n = 0; n < occurrence; n++) at = el.value.indexOf(text, at + 1);
        if (at < 0) return { found: false, holds: el.type === 'password' ? '' : el.value };
        el.setSelectionRange(at, at + text.length);
        return { found: true, selected: el.value.slice(el.selectionStart ?? 0, el.selectionEnd ?? 0) };
      }
      // The element's text nodes, joined, with where each starts: the words may cross formatting (<b>, <span>).
      const nodes: Array<{ node: Text; start: number }> = [];
      let whole = '';
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
        nodes.push({ node, start: whole.length });
        whole += node.data;
      }
      let at = -1;
      for (let n = 0; n < occurrence; n++) at = whole.indexOf(text, at + 1);
      if (at < 0) return { found: false, holds: whole };
      const end = at + text.length;
      // No named functions in here: this runs in the page as source, where a bundler's naming helpers do not exist.
      let from = nodes[0]!;
      let to = nodes[0]!;
      for (const n of nodes) {
        if (n.start <= at) from = n;
        if (n.start < end) to = n;
      }
      const range = document.createRange();
      range.setStart(from.node, at - from.start);
      range.setEnd(to.node, end - to.start);
      const selection = window.getSelection()!;
      selection.removeAllRanges();
      selection.addRange(range);
      return { found: true, selected: selection.toString() };
    },
    { text: s.args.text as string, occurrence },
    { timeout: s.timeout },
  );
  if (!outcome.found) {
    const holds = (outcome.holds ?? '').replace(/\s+/g, ' ').trim();
    throw new ServiceError(
      'invalid_argument',
      `${str(s.shown.text)}${occurrence > 1 ? ` (occurrence ${occurrence})` : ''} is not in ${s.target}; it holds ${str(masked(s, holds))}. Give the words as the element shows them.`,
    );
  }
  return `Selected ${str(masked(s, outcome.selected ?? ''))}${occurrence > 1 ? ` (occurrence ${occurrence})` : ''} in ${s.target}.`;
}

async function upload(s: Step): Promise<string> {
  const files = (s.args.files as Array<{ name: string; mimeType?: string; contentBase64: string }>).map((file, i) => {
    const clean = file.contentBase64.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean))
      throw new ServiceError('invalid_argument', `arguments.files.${i}.contentBase64 is not base64.`);
    return { name: file.name, mimeType: file.mimeType ?? 'application/octet-stream', buffer: Buffer.from(clean, 'base64') };
  });
  const total = files.reduce((sum, file) => sum + file.buffer.length, 0);
  if (total > MAX_UPLOAD_BYTES)
    throw new ServiceError(
      'payload_too_large',
      `The files add up to ${total} bytes; at most ${MAX_UPLOAD_BYTES} bytes can be uploaded at once.`,
    );
  const element = await s.element();
  await inSlices(s, (timeout) => element.setInputFiles(files, { timeout }));
  return `Uploaded ${files.map((file) => `${str(file.name)} (${file.buffer.length} bytes)`).join(', ')} to ${s.target}.`;
}

async function history(s: Step, way: 'back' | 'forward'): Promise<string> {
  const before = s.page.url();
  const options = { timeout: Math.max(s.timeout, DEFAULTS.navigationTimeoutMs), waitUntil: 'load' as const };
  const response = way === 'back' ? await s.page.goBack(options) : await s.page.goForward(options);
  const after = s.page.url();
  if (!response && after === before) return way === 'back' ? 'There is no previous page.' : 'There is no next page.';
  return `Went ${way} to ${after}.`;
}

async function wait(s: Step): Promise<string> {
  const { text, textGone, ms } = s.args as { text?: string; textGone?: string; ms?: number };
  const given = [text, textGone, ms].filter((value) => value !== undefined).length;
  // With no arguments the wait is the settle that follows every action (src/core/settle).
  if (given === 0) return 'Waited for the page to settle.';
  if (given > 1)
    throw new ServiceError(
      'invalid_argument',
      'Give one of ms (time to wait), text (to wait for) or textGone (to wait until it disappears), or none to wait for the page to settle.',
    );
  if (ms !== undefined) {
    await sleep(ms, s.signal);
    return `Waited ${ms} ms.`;
  }
  const shownText = clip((s.shown.text ?? s.shown.textGone) as string);
  const locator = s.page.getByText((text ?? textGone)!).first();
  const state = text !== undefined ? 'visible' : 'hidden';
  // In slices, so that a cancelled call leaves no wait behind for long.
  const deadline = Date.now() + s.timeout;
  for (;;) {
    throwIfAborted(s.signal);
    const left = deadline - Date.now();
    try {
      await locator.waitFor({ state, timeout: Math.max(1, Math.min(left, WAIT_SLICE_MS)) });
      break;
    } catch (err) {
      if (err instanceof playwrightErrors.TimeoutError && left > WAIT_SLICE_MS) continue;
      throw new ServiceError(
        'action_timeout',
        `${str(shownText)} ${text !== undefined ? 'did not appear' : 'was still visible'} within ${s.timeout} ms.`,
        { cause: err },
      );
    }
  }
  return text !== undefined ? `${str(shownText)} is visible.` : `${str(shownText)} is gone.`;
}

/** A text the caller gave, cut to MAX_ECHO_CHARS for a message: a 100 KB selector is not said back whole. */
function clip(text: string): string {
  return text.length > MAX_ECHO_CHARS ? `${text.slice(0, MAX_ECHO_CHARS - 1)}…` : text;
}

/** Waits for a navigation the action may have started to load; a page that keeps loading is read as it is. */
async function loaded(page: Page): Promise<void> {
  await page.waitForLoadState('load', { timeout: LOAD_AFTER_ACTION_MS }).catch(() => undefined);
}
