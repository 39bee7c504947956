import type { Locator, Page } from 'playwright-core';
import { DEFAULTS } from '../config.js';
import { ServiceError } from '../errors.js';
import { checkUrl, navigate, type NavigatePolicy } from '../navigate.js';
import { sleep } from '../operation.js';
import type { Session } from '../sessions.js';
import { resolveRef } from '../snapshot/index.js';
import { refTarget } from '../snapshot/refs.js';
import { Variables } from '../variables.js';
import { actionError } from './errors.js';
import { ELEMENT_METHODS, MAX_UPLOAD_BYTES, METHOD_ARGUMENTS, PAGE_METHODS, type Action, type ActMethod } from './schema.js';

/** Default longest wait for an element to become actionable. */
export const ACTION_TIMEOUT_MS = 10_000;
/** After an action that may navigate, how long to wait for the new page to load. */
const LOAD_AFTER_ACTION_MS = 5_000;

export interface PerformOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Fills %name% placeholders in the arguments just before acting. */
  variables?: Variables;
  /** Which URLs newTab may open (navigate's policy). */
  policy?: NavigatePolicy;
}

export interface Performed {
  /** One sentence for the caller or a model; values of variables stay placeholders. */
  message: string;
  /** The element as the page text names it, e.g. `button "Sign in"`, or the page. */
  description: string;
}

interface Step {
  session: Session;
  page: Page;
  /** Undefined for an action on the page as a whole. */
  ref: string | undefined;
  element: () => Promise<Locator>;
  args: Record<string, unknown>;
  /** The arguments as given, for messages: placeholders, not values. */
  shown: Record<string, unknown>;
  target: string;
  timeout: number;
  signal?: AbortSignal;
  policy: NavigatePolicy;
}

/** Performs one action on the session's page; the one implementation behind act and the agent's browser tools. */
export async function performAction(session: Session, action: Action, options: PerformOptions = {}): Promise<Performed> {
  const { method } = action;
  const ref = PAGE_METHODS.has(method) ? undefined : action.ref?.trim().replace(/^\[|\]$/g, '') || undefined;
  if (ELEMENT_METHODS.has(method) && !ref)
    throw new ServiceError('invalid_argument', `${method} needs the ref of an element; read the page to get one.`);
  const variables = options.variables ?? new Variables();
  const shown = checkArguments(method, action.arguments ?? {});
  const args = checkArguments(method, variables.substituteDeep(action.arguments ?? {}) as Record<string, unknown>);
  const description = ref ? describeRef(session, ref) : 'the page';
  const timeout = options.timeoutMs ?? ACTION_TIMEOUT_MS;
  const step: Step = {
    session,
    page: session.page,
    ref,
    element: () => resolveRef(session, ref!),
    args,
    shown,
    target: ref ? `[${ref}] ${description}` : 'the page',
    timeout,
    signal: options.signal,
    policy: options.policy ?? { allowFileUrls: false },
  };
  try {
    const message = await METHODS[method](step);
    return { message: variables.redact(message), description };
  } catch (err) {
    throw actionError(err, { method, target: step.target, timeoutMs: timeout });
  }
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
  if (!target)
    throw new ServiceError(
      'ref_not_found',
      `Unknown element ref "${ref}". Refs look like "41" (or "1-41" inside an iframe) and come from the latest page text or observe; read the page again to get fresh ones.`,
    );
  return target.name ? `${target.role} ${JSON.stringify(target.name)}` : target.role;
}

const str = (value: unknown) => JSON.stringify(value);

const METHODS: Record<ActMethod, (step: Step) => Promise<string>> = {
  click: async (s) => {
    await (await s.element()).click({ timeout: s.timeout, ...(s.args as object) });
    await loaded(s.page);
    return `Clicked ${s.target}.`;
  },
  dblclick: async (s) => {
    await (await s.element()).dblclick({ timeout: s.timeout, ...(s.args as object) });
    await loaded(s.page);
    return `Double-clicked ${s.target}.`;
  },
  fill: async (s) => {
    await (await s.element()).fill(s.args.value as string, { timeout: s.timeout });
    return `Filled ${s.target} with ${str(s.shown.value)}.`;
  },
  type: async (s) => {
    await (await s.element()).pressSequentially(s.args.text as string, { timeout: s.timeout });
    return `Typed ${str(s.shown.text)} into ${s.target}.`;
  },
  press: async (s) => {
    const key = s.args.key as string;
    if (s.ref) await (await s.element()).press(key, { timeout: s.timeout });
    else await s.page.keyboard.press(key);
    await loaded(s.page);
    return `Pressed ${key} on ${s.ref ? s.target : 'the focused element'}.`;
  },
  selectOption: async (s) => {
    const selected = await (await s.element()).selectOption(s.args.values as string[], { timeout: s.timeout });
    await loaded(s.page);
    return `Selected ${selected.map(str).join(', ')} in ${s.target}.`;
  },
  check: async (s) => {
    await (await s.element()).check({ timeout: s.timeout });
    return `Checked ${s.target}.`;
  },
  uncheck: async (s) => {
    await (await s.element()).uncheck({ timeout: s.timeout });
    return `Unchecked ${s.target}.`;
  },
  hover: async (s) => {
    await (await s.element()).hover({ timeout: s.timeout });
    return `Hovering over ${s.target}.`;
  },
  scroll: (s) => scroll(s),
  dragTo: async (s) => {
    const targetRef = String(s.args.targetRef).replace(/^\[|\]$/g, '');
    const to = `[${targetRef}] ${describeRef(s.session, targetRef)}`;
    const [source, target] = [await s.element(), await resolveRef(s.session, targetRef)];
    await source.dragTo(target, { timeout: s.timeout });
    return `Dragged ${s.target} onto ${to}.`;
  },
  upload: (s) => upload(s),
  back: (s) => history(s, 'back'),
  forward: (s) => history(s, 'forward'),
  reload: async (s) => {
    await s.page.reload({ timeout: Math.max(s.timeout, DEFAULTS.navigationTimeoutMs), waitUntil: 'load' });
    return `Reloaded ${s.page.url()}.`;
  },
  wait: (s) => wait(s),
  newTab: async (s) => {
    const url = checkUrl(s.args.url as string, s.policy).href;
    const tabId = await s.session.pages.open();
    await navigate(s.session, { url, options: { timeout: Math.max(s.timeout, DEFAULTS.navigationTimeoutMs) } }, s.policy, {
      signal: s.signal,
    });
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

async function scroll(s: Step): Promise<string> {
  const direction = s.args.direction as 'up' | 'down' | undefined;
  const screens = ((s.args.screens as number | undefined) ?? 1) * (direction === 'up' ? -1 : 1);
  if (s.ref && !direction) {
    await (await s.element()).scrollIntoViewIfNeeded({ timeout: s.timeout });
    return `Scrolled ${s.target} into view.`;
  }
  const at = !s.ref
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
  await (await s.element()).setInputFiles(files, { timeout: s.timeout });
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
  const shownText = (s.shown.text ?? s.shown.textGone) as string;
  const locator = s.page.getByText((text ?? textGone)!).first();
  await locator.waitFor({ state: text !== undefined ? 'visible' : 'hidden', timeout: s.timeout }).catch((err: unknown) => {
    throw new ServiceError(
      'action_timeout',
      `${str(shownText)} ${text !== undefined ? 'did not appear' : 'was still visible'} within ${s.timeout} ms.`,
      { cause: err },
    );
  });
  return text !== undefined ? `${str(shownText)} is visible.` : `${str(shownText)} is gone.`;
}

/** Waits for a navigation the action may have started to load; a page that keeps loading is read as it is. */
async function loaded(page: Page): Promise<void> {
  await page.waitForLoadState('load', { timeout: LOAD_AFTER_ACTION_MS }).catch(() => undefined);
}
