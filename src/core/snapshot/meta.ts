/**
 * Page metadata for the page text's first line (issue 31): language, canonical URL, meta description, author and
 * published time, and the main JSON-LD item's type, headline, author and datePublished. An author or date a page
 * keeps only in its <head> is otherwise out of a model's reach. Read in the reader's world (out of the page's reach)
 * beside the walk; `<time datetime>` values are the walker's (inline, where the time's text is).
 *
 * `readMeta` is sent to the page as its own source text (`META_SOURCE`), so it must stand alone: no imports, no closures
 * over this module, no classes (a bundler's helpers would not exist in the page).
 */
import type { Cdp } from '../page/cdp.js';

/** What the page says about itself; only fields present, each string capped in the page. */
export interface PageMeta {
  lang?: string;
  canonical?: string;
  description?: string;
  author?: string;
  published?: string;
  ld?: { type?: string; headline?: string; author?: string; published?: string };
}

export interface MetaLimits {
  /** Longest string kept (the description's cap; shorter fields have their own, below it). */
  maxChars: number;
  /** A JSON-LD script longer than this is not parsed (a catalogue's worth of products). */
  maxLdChars: number;
  /** Most JSON-LD scripts parsed, and most items looked at across them. */
  maxLdScripts: number;
  maxLdItems: number;
}

export const META_LIMITS: MetaLimits = { maxChars: 160, maxLdChars: 100_000, maxLdScripts: 10, maxLdItems: 100 };

export function readMeta(limits: MetaLimits): PageMeta {
  const cap = (value: unknown, max = limits.maxChars): string | undefined => {
    if (typeof value !== 'string' && typeof value !== 'number') return undefined;
    // Whitespace of any kind (line separators too) becomes one space: a page cannot start a line of its own here.
    const text = String(value).replace(/\s+/g, ' ').trim();
    if (!text) return undefined;
    return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
  };
  // One pass over the document: metadata tags, the canonical link and JSON-LD (in <head> or, often, in <body>).
  const tags = new Map<string, string>();
  let canonical: HTMLLinkElement | undefined;
  const scripts: Element[] = [];
  for (const el of Array.from(document.querySelectorAll('meta[content], link[rel][href], script[type]'))) {
    if (el.localName === 'meta') {
      const value = cap(el.getAttribute('content'));
      for (const attribute of ['name', 'property', 'itemprop']) {
        const key = el.getAttribute(attribute)?.toLowerCase();
        if (key && value && !tags.has(key)) tags.set(key, value);
      }
    } else if (el.localName === 'link') {
      if (!canonical && /(?:^|\s)canonical(?:\s|$)/i.test(el.getAttribute('rel') ?? '')) canonical = el as HTMLLinkElement;
    } else if ((el.getAttribute('type') ?? '').trim().toLowerCase() === 'application/ld+json' && scripts.length < limits.maxLdScripts)
      scripts.push(el);
  }
  const meta: PageMeta = {};
  const lang = cap(document.documentElement?.getAttribute('lang'), 20);
  if (lang) meta.lang = lang;
  const canonicalUrl = canonical ? cap(canonical.href, 200) : undefined;
  if (canonicalUrl && /^https?:/i.test(canonicalUrl)) meta.canonical = canonicalUrl;
  const description = tags.get('description') ?? tags.get('og:description');
  if (description) meta.description = description;
  const author = tags.get('author');
  if (author) meta.author = cap(author, 80);
  const published = tags.get('article:published_time') ?? tags.get('datepublished');
  if (published) meta.published = cap(published, 40);

  /** A JSON-LD author: a name, a Person or Organization, or a list of those. */
  const nameOf = (value: unknown): string | undefined => {
    if (typeof value === 'string') return value;
    if (Array.isArray(value))
      return (
        value
          .slice(0, 3)
          .map(nameOf)
          .filter((name) => name)
          .join(', ') || undefined
      );
    if (value && typeof value === 'object') return nameOf((value as Record<string, unknown>).name);
    return undefined;
  };
  const items: Array<Record<string, unknown>> = [];
  const gather = (value: unknown, depth: number): void => {
    if (items.length >= limits.maxLdItems || depth > 3 || !value || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) gather(item, depth + 1);
      return;
    }
    const item = value as Record<string, unknown>;
    items.push(item);
    if (item['@graph']) gather(item['@graph'], depth + 1);
  };
  for (const script of scripts) {
    const text = script.textContent ?? '';
    if (text.length > limits.maxLdChars) continue;
    try {
      // Some pages wrap it as XHTML taught them: `//<![CDATA[ {...} //]]>`.
      gather(JSON.parse(text.replace(/^\s*(?:\/\/\s*)?<!\[CDATA\[/, '').replace(/(?:\/\/\s*)?\]\]>\s*$/, '')), 0);
    } catch {
      // Malformed JSON-LD is common (a trailing comma, an HTML entity): the page has nothing to say here.
    }
  }
  // The main item is the first that says what the page is about: a headline, an author or a date.
  for (const item of items) {
    const headline = cap(item.headline ?? (item.datePublished ? item.name : undefined), 120);
    const ldAuthor = cap(nameOf(item.author), 80);
    const ldPublished = cap(item.datePublished, 40);
    if (!headline && !ldAuthor && !ldPublished) continue;
    const type = cap(Array.isArray(item['@type']) ? item['@type'][0] : item['@type'], 40);
    meta.ld = {};
    if (type) meta.ld.type = type;
    if (headline) meta.ld.headline = headline;
    if (ldAuthor) meta.ld.author = ldAuthor;
    if (ldPublished) meta.ld.published = ldPublished;
    break;
  }
  return meta;
}

/**
 * The reader as a function declaration for CDP's Runtime.callFunctionOn. Bundlers that keep function names (tsx's
 * esbuild) wrap inner functions in `__name(...)`; the page has no such helper, so it is defined as a no-op around it.
 */
export const META_SOURCE = `(() => { const __name = (fn) => fn; return (${readMeta.toString()}); })()`;

/** The frame's metadata, read in the reader's world; undefined when the page did not answer it. */
export async function pageMeta(cdp: Cdp, worlds: { utility?: number }): Promise<PageMeta | undefined> {
  const evaluated = await cdp.send<{ result: { value?: unknown }; exceptionDetails?: unknown }>('Runtime.callFunctionOn', {
    functionDeclaration: META_SOURCE,
    executionContextId: worlds.utility,
    arguments: [{ value: META_LIMITS }],
    returnByValue: true,
  });
  if (evaluated.exceptionDetails || !evaluated.result.value || typeof evaluated.result.value !== 'object') return undefined;
  return evaluated.result.value as PageMeta;
}

/** A date-time without zero seconds or fractions: `2024-03-14T09:30:00.000Z` is `2024-03-14T09:30Z`. */
export function shortTime(value: string): string {
  return value.replace(/(T\d\d:\d\d)(?::00)?(?:\.\d+)?(?=Z|[+-]\d|$)/, (_, hm: string) => hm).replace(/(T\d\d:\d\d:\d\d)\.\d+/, '$1');
}

const SAME = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * The URL's origin and path without a trailing slash: a canonical URL that differs from the page's only in its query
 * (tracking parameters) or fragment says nothing new.
 */
function bareUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/$/, '')}`;
  } catch {
    return url;
  }
}

/**
 * The metadata as the page text's first line, or undefined when there is nothing worth a line:
 * `meta: lang en · canonical https://… · author Mara Lindqvist · published 2024-03-14 · JSON-LD NewsArticle "…" · description …`.
 * The language alone makes no line (the text shows it); a canonical URL that differs from the page's only in its query
 * or fragment, a headline or description
 * the title or the page text already holds (a lede, an <h1>) and a JSON-LD author or date equal to the meta tags' are
 * left out. The title is not repeated here: it comes with the page text (the agent's `Title:`, extract's `Page:` line
 * and `location`).
 */
export function metaLine(meta: PageMeta | undefined, page: { url: string; title: string; text: string }): string | undefined {
  if (!meta) return undefined;
  // A capped string is looked for without its ellipsis.
  const shown = (value: string) => {
    const said = value.replace(/…$/, '');
    return page.title.includes(said) || page.text.includes(said);
  };
  const parts: string[] = [];
  if (meta.canonical && bareUrl(meta.canonical) !== bareUrl(page.url)) parts.push(`canonical ${meta.canonical}`);
  const author = meta.author ?? meta.ld?.author;
  if (author) parts.push(`author ${author}`);
  const published = meta.published ?? meta.ld?.published;
  if (published) parts.push(`published ${shortTime(published)}`);
  const ld = meta.ld;
  if (ld) {
    const headline = ld.headline && !shown(ld.headline) ? ` "${ld.headline}"` : '';
    const by = ld.author && author !== ld.author && !SAME(author, ld.author) ? ` by ${ld.author}` : '';
    const on = ld.published && shortTime(ld.published) !== (published && shortTime(published)) ? ` ${shortTime(ld.published)}` : '';
    if (ld.type || headline || by || on) parts.push(`JSON-LD${ld.type ? ` ${ld.type}` : ''}${headline}${by}${on}`);
  }
  if (meta.description && !shown(meta.description)) parts.push(`description ${meta.description}`);
  if (!parts.length) return undefined;
  if (meta.lang) parts.unshift(`lang ${meta.lang}`);
  return `meta: ${parts.join(' · ')}`;
}
