/** Shortest value masked inside longer text: shorter ones would mask ordinary words. */
export const MIN_MASKED_LENGTH = 3;

/** %name% placeholders (the agent and act): the model only ever sees and writes the placeholder; the value is put in just before the browser acts. */
export class Variables {
  private readonly entries: Array<[string, string]>;

  constructor(values: Record<string, string> = {}) {
    // Longest values first so a value containing another is masked whole.
    this.entries = Object.entries(values).sort((a, b) => b[1].length - a[1].length);
  }

  get names(): string[] {
    return this.entries.map(([name]) => name).sort();
  }

  /** Replaces known %name% placeholders with their values; unknown ones stay as written. */
  substitute(text: string): string {
    if (!this.entries.length) return text;
    return text.replace(/%([A-Za-z0-9_]+)%/g, (whole, name: string) => this.entries.find(([key]) => key === name)?.[1] ?? whole);
  }

  /** Substitutes in every string of a JSON-like value. */
  substituteDeep(value: unknown): unknown {
    if (!this.entries.length) return value;
    if (typeof value === 'string') return this.substitute(value);
    if (Array.isArray(value)) return value.map((item) => this.substituteDeep(item));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.substituteDeep(item)]));
    return value;
  }

  /**
   * Masks values back to their placeholders in text headed for the model or the result: a typed secret shows up in
   * the page text, and encoded in the URL a GET form leads to.
   */
  redact(text: string): string {
    let out = text;
    for (const [name, value] of this.entries) {
      if (value.length < MIN_MASKED_LENGTH) continue;
      for (const form of [value, ...encodings(value)]) if (out.includes(form)) out = out.split(form).join(`%${name}%`);
    }
    return out;
  }
}

/**
 * A secret as other text carries it: URL-encoded (encodeURIComponent), with `+` for spaces, as a browser form-encodes it
 * (application/x-www-form-urlencoded, in a form post and a GET form's URL: `!'()~` are escaped too) and HTML-escaped.
 */
export function encodings(value: string): string[] {
  const uri = encodeURIComponent(value);
  const form = new URLSearchParams({ v: value }).toString().slice('v='.length);
  // A URL's query as the browser keeps it after a page or redirect put it there with encodeURIComponent: ' is %27.
  const query = uri.replace(/'/g, '%27');
  return [...new Set([uri, uri.replace(/%20/g, '+'), query, form, escapeHtml(value)])].filter((encoded) => encoded !== value);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
