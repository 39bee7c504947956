import { encodings, MIN_MASKED_LENGTH, reformattedPattern, replaceReformatted } from '../variables.js';

/**
 * The secret strings a session has handled: values of `%name%` variables and values typed into password fields.
 * They never leave the server: the action log and the trace are masked with them, each value by its label
 * (`%name%`, or `[password]`).
 */
export class SessionSecrets {
  private readonly labels = new Map<string, string>();
  /** entries(), kept until a secret is added. */
  private sorted: Array<[string, string]> | undefined;
  /** Each secret's encodings, made once: mask() runs for every string of a trace line that holds a secret. */
  private readonly encoded = new Map<string, string[]>();
  /**
   * When (ms since the epoch) a secret was first typed into a page: pictures taken from then on may show it, and the
   * trace keeps only masked ones (trace.ts).
   */
  typedAt: number | undefined;

  /** Values of `variables`, each masked as its `%name%` placeholder. */
  addVariables(values: Record<string, string | { value: string }> | undefined): void {
    for (const [name, given] of Object.entries(values ?? {})) {
      const value = typeof given === 'string' ? given : given.value;
      if (value) this.labels.set(value, `%${name}%`);
    }
    this.sorted = undefined;
  }

  /** A value typed into a password field (unless a variable already names it). */
  addPassword(value: string): void {
    if (value && !this.labels.has(value)) this.labels.set(value, '[password]');
    this.sorted = undefined;
  }

  /** A secret was typed into a page (a variable's value, a password): the page may show it from now on. */
  typed(): void {
    this.typedAt ??= Date.now();
  }

  get size(): number {
    return this.labels.size;
  }

  /** Each secret and its label, longest first so a value containing another is masked whole. */
  entries(): Array<[string, string]> {
    return (this.sorted ??= [...this.labels].sort((a, b) => b[0].length - a[0].length));
  }

  /** A copy that later additions to this one do not change. */
  snapshot(): SessionSecrets {
    const copy = new SessionSecrets();
    for (const [value, label] of this.labels) copy.labels.set(value, label);
    copy.typedAt = this.typedAt;
    return copy;
  }

  /**
   * Text with every secret masked: a whole-string match whatever its length, inside longer text from
   * MIN_MASKED_LENGTH, as typed, encoded, or reformatted with separators (`4111 1111 1111 1111`, variables.ts).
   */
  mask(text: string): string {
    if (!this.labels.size) return text;
    const whole = this.labels.get(text);
    if (whole !== undefined) return whole;
    let out = text;
    for (const [value, label] of this.entries()) {
      if (value.length < MIN_MASKED_LENGTH) continue;
      if (out.includes(value)) out = out.split(value).join(label);
      // Encoded, as in a URL a GET form made: masked with the label encoded alike.
      for (const encoded of this.encodingsOf(value)) if (out.includes(encoded)) out = out.split(encoded).join(encodeURIComponent(label));
      out = replaceReformatted(out, value, label);
    }
    return out;
  }

  /** Masks every string of a JSON-like value (keys stay). */
  maskDeep(value: unknown, depth = 0): unknown {
    if (!this.labels.size) return value;
    if (depth > MAX_LOGGED_DEPTH) return TOO_DEEP;
    if (typeof value === 'string') return this.mask(value);
    if (Array.isArray(value)) return value.map((item) => this.maskDeep(item, depth + 1));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.maskDeep(item, depth + 1)]));
    return value;
  }

  /**
   * What a JSON text holds where one of its strings would be masked: each secret as JSON writes it inside a string,
   * or, under MIN_MASKED_LENGTH, as a whole string with its quotes. A text without any of them has nothing to mask.
   */
  jsonForms(): string[] {
    return this.entries().map(([value]) =>
      value.length >= MIN_MASKED_LENGTH ? JSON.stringify(value).slice(1, -1) : JSON.stringify(value),
    );
  }

  private encodingsOf(value: string): string[] {
    let found = this.encoded.get(value);
    if (!found) this.encoded.set(value, (found = encodings(value)));
    return found;
  }

  /**
   * Each secret's regex over the latin1 reading of UTF-8 bytes (variables.ts reformattedPattern) and the label that
   * replaces it there: finds it reformatted in a trace line or a body.
   */
  bytePatterns(): Array<[RegExp, string]> {
    return this.entries().flatMap(([value, label]): Array<[RegExp, string]> => {
      const pattern = reformattedPattern(value, 'bytes');
      return pattern ? [[pattern, encodeURIComponent(label)]] : [];
    });
  }

  /** The forms a secret takes in raw bytes (a form post, a page's HTML): as is, and each of its encodings. */
  encodedForms(): Array<[Buffer, Buffer]> {
    const forms: Array<[Buffer, Buffer]> = [];
    for (const [value, label] of this.entries()) {
      if (value.length < MIN_MASKED_LENGTH) continue;
      for (const variant of [value, ...this.encodingsOf(value)]) forms.push([Buffer.from(variant), Buffer.from(encodeURIComponent(label))]);
    }
    return forms;
  }
}

/** Argument keys whose values are credentials (a model's apiKey, an integration's headers): never logged. */
const CREDENTIAL_KEYS = /^(api[-_]?key|authorization|x-api-key|x-svc-api-key|cookie|headers)$/i;

/**
 * A JSON-like copy of logged arguments with the values of credential keys replaced by `[redacted]`. Only data is
 * walked: a function is `[function]` and an object that is not plain data (a library caller's connected MCP `Client`,
 * a zod schema of a custom tool) is `[<its class>]`, since such objects hold cycles and whole object graphs.
 */
export function withoutCredentials(value: unknown, depth = 0): unknown {
  if (depth > MAX_LOGGED_DEPTH) return TOO_DEEP;
  if (typeof value === 'function') return '[function]';
  if (Array.isArray(value)) return value.map((item) => withoutCredentials(item, depth + 1));
  if (value && typeof value === 'object' && !isPlainData(value)) return `[${value.constructor?.name || 'object'}]`;
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        CREDENTIAL_KEYS.test(key) && item !== undefined ? '[redacted]' : withoutCredentials(item, depth + 1),
      ]),
    );
  return value;
}

function isPlainData(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Logged arguments are cut below this depth (`"[nested too deep]"`): a call refused for its nesting (a JSON schema
 * thousands of levels deep) is still logged, with its own error, rather than overflowing the stack.
 */
const MAX_LOGGED_DEPTH = 100;
const TOO_DEEP = '[nested too deep]';
