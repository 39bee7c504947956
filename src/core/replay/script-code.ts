import { createRequire } from 'node:module';

/**
 * What differs between a session's script in TypeScript and in Python (script.ts writes the steps once, in these
 * terms): literals, reads of the environment, calls, and the file around the steps.
 */
export interface Language {
  /** Playwright's name of the language, for its locator writer. */
  readonly locatorLanguage: 'javascript' | 'python';
  /** A string, number, boolean, or a list or plain object of them, as a literal. */
  literal(value: unknown): string;
  /** The value of environment variable `name`, read at the script's start. */
  env(name: string): string;
  /** `code` (a string) encoded as a URL component, as encodeURIComponent does. */
  encoded(code: string): string;
  /** An object of code values: `{ text: env.X }`, `{"text": env["X"]}`. */
  object(entries: Array<[string, string]>): string;
  /** `receiver.method(args, options)` as an expression, awaited where the language awaits. */
  call(receiver: string, method: string, args?: string[], options?: Array<[string, string]>): string;
  /** An expression as a statement. */
  statement(code: string): string;
  /** `name = value` for a name declared already. */
  assign(name: string, value: string): string;
  /** A statement done `times` times, as lines. */
  repeat(times: number, statement: string): string[];
  /** The newest page of the browser context. */
  newestPage(): string;
  /** The first element showing `code` (a string), as act's wait looks for it. */
  textLocator(code: string): string;
  /** JavaScript `source` (a function) to run in the page, as `evaluate` takes it. */
  pageFunction(source: string): string;
  /** A statement that stops the script with `message`. */
  fail(message: string): string;
  /** A one-line comment: line breaks and control characters become spaces, and a long text is cut. */
  comment(text: string): string;
}

/** Longest text a comment of a script repeats. */
const MAX_COMMENT_CHARS = 200;

function oneLine(text: string): string {
  // Line terminators end a comment in both languages (U+2028 and U+2029 in JavaScript); a lone surrogate cannot be written.
  const flat = text
    .replace(/[\s\p{Cc}\p{Cf}]+/gu, ' ')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
    .trim();
  return flat.length > MAX_COMMENT_CHARS ? `${flat.slice(0, MAX_COMMENT_CHARS - 1)}…` : flat;
}

/** Whether `name` can follow a dot (`env.PASSWORD`) rather than be indexed (`env["2FA"]`). */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export const typescript: Language = {
  locatorLanguage: 'javascript',
  // JSON is valid JavaScript since ES2019 (U+2028 included), and JSON.stringify escapes lone surrogates.
  literal: (value) => {
    if (Array.isArray(value)) return `[${value.map((item) => typescript.literal(item)).join(', ')}]`;
    if (value && typeof value === 'object')
      return typescript.object(Object.entries(value).map(([key, item]) => [key, typescript.literal(item)]));
    return JSON.stringify(value) ?? 'undefined';
  },
  env: (name) => (IDENTIFIER.test(name) ? `env.${name}` : `env[${JSON.stringify(name)}]`),
  encoded: (code) => `encodeURIComponent(${code})`,
  object: (entries) =>
    entries.length
      ? `{ ${entries.map(([key, code]) => `${IDENTIFIER.test(key) ? key : JSON.stringify(key)}: ${code}`).join(', ')} }`
      : '{}',
  call: (receiver, method, args = [], options = []) =>
    `await ${receiver}.${method}(${[...args, ...(options.length ? [typescript.object(options)] : [])].join(', ')})`,
  statement: (code) => `${code};`,
  assign: (name, value) => `${name} = ${value};`,
  repeat: (times, statement) => [`for (let i = 0; i < ${times}; i++) ${statement}`],
  newestPage: () => 'context.pages()[context.pages().length - 1]',
  textLocator: (code) => `page.getByText(${code}).first()`,
  pageFunction: (source) => source,
  fail: (message) => `throw new Error(${JSON.stringify(message)});`,
  comment: (text) => `// ${oneLine(text)}`,
};

export const python: Language = {
  locatorLanguage: 'python',
  literal: (value) => {
    if (typeof value === 'string') return pythonString(value);
    if (typeof value === 'boolean') return value ? 'True' : 'False';
    if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'None';
    if (Array.isArray(value)) return `[${value.map((item) => python.literal(item)).join(', ')}]`;
    if (value && typeof value === 'object') return python.object(Object.entries(value).map(([key, item]) => [key, python.literal(item)]));
    return 'None';
  },
  env: (name) => `env[${pythonString(name)}]`,
  // encodeURIComponent leaves these unencoded too; quote() always keeps letters, digits and _.-~.
  encoded: (code) => `quote(${code}, safe="!'()*")`,
  object: (entries) => `{${entries.map(([key, code]) => `${pythonString(key)}: ${code}`).join(', ')}}`,
  call: (receiver, method, args = [], options = []) =>
    `${receiver}.${snakeCase(method)}(${[...args, ...options.map(([key, code]) => `${snakeCase(key)}=${code}`)].join(', ')})`,
  statement: (code) => code,
  assign: (name, value) => `${name} = ${value}`,
  repeat: (times, statement) => [`for _ in range(${times}):`, `    ${statement}`],
  newestPage: () => 'context.pages[-1]',
  textLocator: (code) => `page.get_by_text(${code}).first`,
  // The page functions are ours, without backslashes or triple quotes: kept as written, line breaks and all.
  pageFunction: (source) => (/\\|"""/.test(source) ? pythonString(source) : `"""${source}"""`),
  fail: (message) => `raise RuntimeError(${pythonString(message)})`,
  comment: (text) => `# ${oneLine(text)}`,
};

/** playwright-python's names: `selectOption` is `select_option`. */
function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** A Python string literal of any JavaScript string: quotes, backslashes, control characters and lone surrogates escaped. */
export function pythonString(text: string): string {
  const escaped = text.replace(
    /[\\"\p{Cc}\u2028\u2029\uFEFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu,
    (char) => {
      const named: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
      if (named[char]) return named[char];
      const code = char.charCodeAt(0);
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
    },
  );
  return `"${escaped}"`;
}

interface PlaywrightIso {
  asLocator(language: string, selector: string): string;
  parseSelector(selector: string): unknown;
}
let iso: PlaywrightIso | undefined;

/**
 * The element's locator as code (`page.getByRole('button', { name: 'Sign in' })`), written by Playwright's own
 * converter, codegen's. A selector it cannot parse is passed whole to `page.locator()`, since the converter would
 * answer it back unchanged as code; so is a test id under another attribute (getByTestId assumes data-testid).
 */
export function locatorCode(language: Language, selector: string): string {
  iso ??= (createRequire(import.meta.url)('playwright-core/lib/coreBundle') as { iso: PlaywrightIso }).iso;
  const whole = `page.locator(${language.literal(selector)})`;
  if (/internal:testid=\[(?!data-testid=)/.test(selector)) return whole;
  try {
    iso.parseSelector(selector);
    return `page.${iso.asLocator(language.locatorLanguage, selector)}`;
  } catch {
    return whole;
  }
}
