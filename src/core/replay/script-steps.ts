import type { RunStep } from '../recording/index.js';
import { locatorCode, type Language } from './script-code.js';

/** A variable's placeholder in an argument: `%name%`, as act substitutes it. */
const PLACEHOLDER = /%([A-Za-z0-9_]+)%/g;
/**
 * In a URL the session masked (navigate's goto, newTab): a placeholder as is, encoded (`%25name%25`), or a password
 * typed without a variable (`[password]`, `%5Bpassword%5D`).
 */
const URL_PLACEHOLDER = /%25([A-Za-z0-9_]+)%25|%5Bpassword%5D|\[password\]|%([A-Za-z0-9_]+)%/gi;
/** A name that starts like a URL escape (`%2Fpath%`, `%E2%`) is one, unless the run's arguments name that variable. */
const ESCAPE_START = /^[0-9A-Fa-f]{2}/;
const TAB_METHODS: ReadonlySet<string> = new Set(['newTab', 'selectTab', 'closeTab']);

/** act's type: a field that does not have focus gets the caret at its end (Playwright's would put it at the start). */
const CARET_AT_END = `(el) => {
  if (el.matches(':focus')) return;
  el.focus();
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    // Email and number fields have no selection to set.
    try { el.setSelectionRange(el.value.length, el.value.length); } catch {}
  } else if (el instanceof HTMLElement && el.isContentEditable) getSelection()?.collapse(el, el.childNodes.length);
}`;

/** act's selectText: the words selected in a field, or in the element's text (across its text nodes). */
const SELECT_TEXT = `(el, { text, occurrence }) => {
  el.focus();
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    let at = -1;
    for (let n = 0; n < occurrence; n++) at = el.value.indexOf(text, at + 1);
    if (at < 0) throw new Error('Not in the field: ' + text);
    el.setSelectionRange(at, at + text.length);
    return;
  }
  const nodes = [];
  let whole = '';
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    nodes.push({ node, start: whole.length });
    whole += node.textContent ?? '';
  }
  let at = -1;
  for (let n = 0; n < occurrence; n++) at = whole.indexOf(text, at + 1);
  if (at < 0) throw new Error('Not in the element: ' + text);
  const end = at + text.length;
  const from = nodes.filter((item) => item.start <= at).pop() ?? nodes[0];
  const to = nodes.filter((item) => item.start < end).pop() ?? nodes[0];
  const range = document.createRange();
  range.setStart(from.node, at - from.start);
  range.setEnd(to.node, end - to.start);
  getSelection()?.removeAllRanges();
  getSelection()?.addRange(range);
}`;

/** A step the script cannot do: said where it would be, and the script stops there. */
class Unscriptable extends Error {}

/**
 * Writes a run's steps as code of one language, in order: each step's comment, its calls, and the wait act did after
 * it. Collects what the script's start needs: the environment variables (secrets, files to upload) and the tab list.
 */
export class StepWriter {
  /** Environment variables the steps read, in the order first read. */
  readonly needed: string[] = [];
  /** Whether a URL needs `%25name%25` encoded (Python imports quote for it). */
  encodes = false;
  /** Whether the steps switch tabs: the script then keeps its pages by the session's tab ids. */
  readonly usesTabs: boolean;
  /** Names of variables the run's arguments use: in a URL they are placeholders even where they look like escapes. */
  private readonly known: Set<string>;
  private uploads = 0;
  /** The session's tab ids the script has pages for, oldest first, and the one acted on. */
  private readonly tabs = ['t0'];
  private current = 't0';
  private nextTab = 1;
  private instruction: string | undefined;

  constructor(
    private readonly lang: Language,
    steps: RunStep[],
  ) {
    this.usesTabs = steps.some((step) => TAB_METHODS.has(step.method));
    const argumentTexts = steps.flatMap((step) => stringsIn(step.method === 'newTab' ? { ...step.arguments, url: '' } : step.arguments));
    this.known = new Set(['password', ...argumentTexts.flatMap((text) => [...text.matchAll(PLACEHOLDER)].map((match) => match[1]!))]);
  }

  /** Step `n` as lines of code. */
  lines(step: RunStep, n: number): string[] {
    const { lang } = this;
    const lines: string[] = [];
    if (step.instruction && step.instruction !== this.instruction) lines.push(lang.comment(`Instruction: ${step.instruction}`));
    this.instruction = step.instruction;
    lines.push(lang.comment(`${n}. ${step.method} ${this.what(step)}${step.actionId ? ` (actionId ${step.actionId})` : ''}`));
    try {
      lines.push(...this.calls(step));
    } catch (err) {
      if (!(err instanceof Unscriptable)) throw err;
      return [...lines, lang.fail(`Step ${n} (${step.method}) cannot be done by this script: ${err.message}`)];
    }
    if (step.waitFor)
      lines.push(
        lang.statement(lang.call('page', 'waitForLoadState', step.waitFor === 'networkidle' ? [lang.literal('networkidle')] : [])),
      );
    return lines;
  }

  /** What the step acted on, for its comment. */
  private what(step: RunStep): string {
    if (step.target) return step.target.description || step.target.selector;
    if (step.url !== undefined) return step.url;
    if (step.x !== undefined && step.y !== undefined) return `at (${step.x}, ${step.y})`;
    const args = step.arguments ?? {};
    return [args.url, args.tabId, args.key].filter((item) => typeof item === 'string').join(' ');
  }

  private calls(step: RunStep): string[] {
    const { lang } = this;
    const args = step.arguments ?? {};
    const run = (receiver: string, method: string, callArgs: string[] = [], options: Array<[string, string]> = []) =>
      lang.statement(lang.call(receiver, method, callArgs, options));
    switch (step.method) {
      case 'goto':
        if (step.url === undefined) throw new Unscriptable('its URL was not recorded.');
        return [run('page', 'goto', [this.text(step.url, true)])];
      case 'click':
      case 'dblclick': {
        const options = this.options(args, { button: 'string', modifiers: 'strings', delay: 'number' });
        if (step.target) return [run(this.element(step), step.method, [], options)];
        // The mouse takes no modifiers: act clicked a point without them too.
        return [
          run(
            'page.mouse',
            step.method,
            this.point(step),
            options.filter(([key]) => key !== 'modifiers'),
          ),
        ];
      }
      case 'fill': {
        const element = this.element(step);
        const fill = run(element, 'fill', [this.text(this.string(args, 'value'))]);
        return args.submit === true ? [fill, run(element, 'press', [lang.literal('Enter')])] : [fill];
      }
      case 'type': {
        const element = this.element(step);
        return [
          run(element, 'evaluate', [lang.pageFunction(CARET_AT_END)]),
          run(element, 'pressSequentially', [this.text(this.string(args, 'text'))]),
        ];
      }
      case 'press': {
        const key = this.text(this.string(args, 'key'));
        const press = run(step.target ? this.element(step) : 'page.keyboard', 'press', [key]);
        const times = typeof args.times === 'number' && Number.isInteger(args.times) ? args.times : 1;
        return times > 1 ? lang.repeat(times, press) : [press];
      }
      case 'selectOption': {
        const values = Array.isArray(args.values) ? args.values.filter((value) => typeof value === 'string') : [];
        if (!values.length) throw new Unscriptable('its option values were not recorded.');
        return [run(this.element(step), 'selectOption', [`[${values.map((value) => this.text(value)).join(', ')}]`])];
      }
      case 'check':
      case 'uncheck':
        return [run(this.element(step), step.method)];
      case 'hover':
        return [step.target ? run(this.element(step), 'hover') : run('page.mouse', 'move', this.point(step))];
      case 'scroll':
        return [this.scroll(step, args)];
      case 'dragTo':
        return this.drag(step, args);
      case 'upload':
        return this.upload(step, args);
      case 'selectText': {
        const occurrence = typeof args.occurrence === 'number' && Number.isInteger(args.occurrence) ? args.occurrence : 1;
        const given = lang.object([
          ['text', this.text(this.string(args, 'text'))],
          ['occurrence', lang.literal(occurrence)],
        ]);
        return [run(this.element(step), 'evaluate', [lang.pageFunction(SELECT_TEXT), given])];
      }
      case 'back':
        return [run('page', 'goBack')];
      case 'forward':
        return [run('page', 'goForward')];
      case 'reload':
        return [run('page', 'reload')];
      case 'wait':
        return this.wait(args);
      case 'newTab':
      case 'selectTab':
      case 'closeTab':
        return this.tab(step.method, args);
      default:
        throw new Unscriptable(`this script knows no method ${JSON.stringify(step.method.slice(0, 40))}.`);
    }
  }

  private scroll(step: RunStep, args: Record<string, unknown>): string {
    const { lang } = this;
    const direction = args.direction === 'up' || args.direction === 'down' ? args.direction : undefined;
    const screens = (typeof args.screens === 'number' && Number.isFinite(args.screens) ? args.screens : 1) * (direction === 'up' ? -1 : 1);
    const by = lang.literal(screens);
    if (!step.target)
      return lang.statement(lang.call('page', 'evaluate', [lang.pageFunction('(by) => window.scrollBy(0, by * window.innerHeight)'), by]));
    const element = this.element(step);
    if (!direction) return lang.statement(lang.call(element, 'scrollIntoViewIfNeeded'));
    return lang.statement(lang.call(element, 'evaluate', [lang.pageFunction('(el, by) => el.scrollBy(0, by * el.clientHeight)'), by]));
  }

  /** dragTo as Playwright's locator.dragTo where both ends are elements, else the mouse pressed, moved and released. */
  private drag(step: RunStep, args: Record<string, unknown>): string[] {
    const { lang } = this;
    const run = (receiver: string, method: string, callArgs: string[] = [], options: Array<[string, string]> = []) =>
      lang.statement(lang.call(receiver, method, callArgs, options));
    const target = typeof args.targetSelector === 'string' ? locatorCode(lang, args.targetSelector) : undefined;
    const drop = pointOf(args.x, args.y);
    const position = args.position as { x?: unknown; y?: unknown } | undefined;
    const at = position && pointOf(position.x, position.y) ? { x: position.x, y: position.y } : undefined;
    if (!target && !drop) throw new Unscriptable('its drop target was not recorded.');
    if (step.target && target) return [run(this.element(step), 'dragTo', [target], at ? [['targetPosition', lang.literal(at)]] : [])];
    return [
      step.target ? run(this.element(step), 'hover') : run('page.mouse', 'move', this.point(step)),
      run('page.mouse', 'down'),
      target
        ? run(target, 'hover', [], at ? [['position', lang.literal(at)]] : [])
        : run(
            'page.mouse',
            'move',
            drop!.map((value) => lang.literal(value)),
            [['steps', lang.literal(10)]],
          ),
      run('page.mouse', 'up'),
    ];
  }

  /** The files of an upload are not in the run (only their names): each is a path read from UPLOAD_FILE_<n>. */
  private upload(step: RunStep, args: Record<string, unknown>): string[] {
    const { lang } = this;
    const files = Array.isArray(args.files) ? (args.files as Array<{ name?: unknown }>) : [];
    if (!files.length) throw new Unscriptable('its files were not recorded.');
    const element = this.element(step);
    const names = files.map(() => this.need(`UPLOAD_FILE_${++this.uploads}`));
    const said = files.map(
      (file, i) => `${names[i]} to the path of ${JSON.stringify(typeof file?.name === 'string' ? file.name : 'a file')}`,
    );
    return [
      lang.comment(`The files are not in the run: set ${said.join(', ')}.`),
      lang.statement(lang.call(element, 'setInputFiles', [`[${names.map((name) => lang.env(name)).join(', ')}]`])),
    ];
  }

  private wait(args: Record<string, unknown>): string[] {
    const { lang } = this;
    if (typeof args.ms === 'number' && Number.isFinite(args.ms))
      return [lang.statement(lang.call('page', 'waitForTimeout', [lang.literal(args.ms)]))];
    if (typeof args.text === 'string') return [lang.statement(lang.call(lang.textLocator(this.text(args.text)), 'waitFor'))];
    if (typeof args.textGone === 'string')
      return [lang.statement(lang.call(lang.textLocator(this.text(args.textGone)), 'waitFor', [], [['state', lang.literal('hidden')]]))];
    // act waited for the page to settle (its own measure of quiet); a load is the nearest Playwright has.
    return [lang.statement(lang.call('page', 'waitForLoadState'))];
  }

  /**
   * Tabs: the session's tab ids (t0, t1, ...) are not recorded where a tab opens, and a popup takes one too, so the
   * script gives them in order of opening and says where it guessed.
   */
  private tab(method: string, args: Record<string, unknown>): string[] {
    const { lang } = this;
    const tab = (id: string) => `tabs[${lang.literal(id)}]`;
    if (method === 'newTab') {
      const id = `t${this.nextTab++}`;
      this.tabs.push(id);
      this.current = id;
      return [
        lang.comment(`A new tab, taken to be the session's ${id} (tabs are numbered in order of opening, popups too).`),
        lang.assign('page', lang.call('context', 'newPage')),
        lang.assign(tab(id), 'page'),
        lang.statement(lang.call('page', 'goto', [this.text(this.string(args, 'url'), true)])),
      ];
    }
    const id = this.string(args, 'tabId');
    const lines: string[] = [];
    if (!this.tabs.includes(id)) {
      lines.push(
        lang.comment(`Guessed: no step opened tab ${id} (a popup?); taken to be the newest page.`),
        lang.assign(tab(id), lang.newestPage()),
      );
      this.tabs.push(id);
      const number = /^t(\d+)$/.exec(id);
      if (number) this.nextTab = Math.max(this.nextTab, Number(number[1]) + 1);
    }
    if (method === 'selectTab') {
      this.current = id;
      return [...lines, lang.assign('page', tab(id)), lang.statement(lang.call('page', 'bringToFront'))];
    }
    lines.push(lang.statement(lang.call(tab(id), 'close')));
    this.tabs.splice(this.tabs.indexOf(id), 1);
    // As the session does: closing the tab acted on selects the newest other.
    if (id === this.current && this.tabs.length) lines.push(lang.assign('page', tab((this.current = this.tabs.at(-1)!))));
    return lines;
  }

  /** The step's element as a locator; a step whose element has no recorded locator cannot be scripted. */
  private element(step: RunStep): string {
    if (!step.target) throw new Unscriptable('its element was not recorded (no locator matched it alone).');
    return locatorCode(this.lang, step.target.selector);
  }

  private point(step: RunStep): string[] {
    const point = pointOf(step.x, step.y);
    if (!point) throw new Unscriptable('neither its element nor a point was recorded.');
    return point.map((value) => this.lang.literal(value));
  }

  private string(args: Record<string, unknown>, key: string): string {
    const value = args[key];
    if (typeof value !== 'string') throw new Unscriptable(`its argument ${key} was not recorded.`);
    return value;
  }

  /** The arguments named in `kinds` that have that kind, as options of a call. */
  private options(args: Record<string, unknown>, kinds: Record<string, 'string' | 'strings' | 'number'>): Array<[string, string]> {
    return Object.entries(kinds)
      .filter(([key, kind]) => {
        const value = args[key];
        if (kind === 'strings') return Array.isArray(value) && value.every((item) => typeof item === 'string');
        return kind === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'string';
      })
      .map(([key]) => [key, this.lang.literal(args[key])]);
  }

  /**
   * A text as code: its placeholders read from the environment (`%password%` is PASSWORD), the rest a literal. In a URL
   * an encoded placeholder is encoded again, and `%2F...%` that is an escape stays text.
   */
  private text(value: string, url = false): string {
    const { lang } = this;
    const pattern = new RegExp(url ? URL_PLACEHOLDER : PLACEHOLDER);
    const parts: string[] = [];
    let last = 0;
    for (let match = pattern.exec(value); match; match = pattern.exec(value)) {
      const name = url ? (match[1] ?? match[2] ?? 'password') : match[1]!;
      if (url && !this.known.has(name) && ESCAPE_START.test(name)) {
        pattern.lastIndex = match.index + 1;
        continue;
      }
      if (match.index > last) parts.push(lang.literal(value.slice(last, match.index)));
      const read = lang.env(this.need(name.toUpperCase()));
      const encoded = url && (match[1] !== undefined || /^%5B/i.test(match[0]));
      this.encodes ||= encoded;
      parts.push(encoded ? lang.encoded(read) : read);
      last = match.index + match[0].length;
    }
    if (last < value.length || !parts.length) parts.push(lang.literal(value.slice(last)));
    return parts.join(' + ');
  }

  private need(name: string): string {
    if (!this.needed.includes(name)) this.needed.push(name);
    return name;
  }
}

/** A point given as two finite numbers. */
function pointOf(x: unknown, y: unknown): [number, number] | undefined {
  return typeof x === 'number' && typeof y === 'number' && Number.isFinite(x) && Number.isFinite(y) ? [x, y] : undefined;
}

/** Every string in a JSON-like value. */
function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
