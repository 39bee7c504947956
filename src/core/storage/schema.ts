import { z } from 'zod';
import { ServiceError } from '../errors.js';
import { checkDepth, parseInput } from '../validation.js';

/**
 * Playwright's storage state (what `BrowserContext.storageState()` answers and `newContext({storageState})` takes):
 * cookies, and per origin its localStorage and, when asked for, its IndexedDB databases.
 */

/** Largest storage state accepted or answered, as JSON bytes: in session_start, from the state operation, in a profile. */
export const MAX_STORAGE_STATE_BYTES = 5 * 1024 * 1024;
export const MAX_COOKIES = 3000;
/**
 * Most origins in a state: Playwright restores (and reads) each origin's storage by loading it in a page, one after
 * another, about 60-140 ms each (a new renderer per site); 1,000 origins made session_start take 63-123 s.
 */
export const MAX_ORIGINS = 100;

const text = (max: number) => z.string().max(max);

/** The latest expiry Playwright takes (the end of year 9999), in Unix seconds. */
export const MAX_COOKIE_EXPIRES = 253_402_300_799;
/** Chromium keeps a cookie whose name and value together are at most this many bytes. */
const MAX_COOKIE_BYTES = 4096;
/** CR, LF, NUL, tab and the other C0 controls, or DEL: Chromium refuses them in a cookie. */
const hasControl = (text: string) => [...text].some((char) => char <= '\u001f' || char === '\u007f');

const CookieFields = z
  .object({
    name: text(4096),
    value: text(16_384),
    domain: text(1024).min(1),
    path: text(4096).regex(/^\//, 'expected a path starting with "/"'),
    expires: z.number().describe('Unix time in seconds; -1 for a session cookie.'),
    httpOnly: z.boolean(),
    secure: z.boolean(),
    sameSite: z.enum(['Strict', 'Lax', 'None']),
    partitionKey: text(1024).optional(),
  })
  .strict();
type CookieFields = z.infer<typeof CookieFields>;

export const StorageCookie = CookieFields
  // Chromium's own rules, checked here: a cookie it refuses was a 503 browser_unavailable, which clients retry.
  .superRefine((cookie, ctx) => {
    for (const [field, problem] of cookieProblems(cookie))
      ctx.addIssue({ code: 'custom', path: [field], message: `cookie ${JSON.stringify(cookie.name.slice(0, 64))}: ${problem}` });
  });

/** What Chromium would refuse in a cookie, by field; the messages never repeat the value. */
function cookieProblems(cookie: CookieFields): Array<[keyof CookieFields, string]> {
  const problems: Array<[keyof CookieFields, string]> = [];
  const { name, value, domain, path, expires, secure, partitionKey } = cookie;
  if (hasControl(name) || /[;=]/.test(name) || name.trim() !== name)
    problems.push(['name', 'a name may not hold control characters (CR, LF, NUL, tab...), ";" or "=", nor start or end with a space']);
  if (hasControl(value) || value.includes(';'))
    problems.push(['value', 'a value may not hold control characters (CR, LF, NUL, tab...) or ";"']);
  if (!name && !value) problems.push(['name', 'a cookie needs a name or a value']);
  if (Buffer.byteLength(name) + Buffer.byteLength(value) > MAX_COOKIE_BYTES)
    problems.push(['value', `its name and value together are over ${MAX_COOKIE_BYTES} bytes, the most Chromium keeps`]);
  if (hasControl(path) || path.includes(';')) problems.push(['path', 'a path may not hold control characters or ";"']);
  if (hasControl(domain) || domain.replace(/^\./, '').split('.').includes(''))
    problems.push(['domain', 'expected a host name such as "example.com" (or ".example.com" for its subdomains too)']);
  if (/^__host-/i.test(name) && (!secure || path !== '/' || domain.startsWith('.')))
    problems.push(['name', 'a __Host- cookie must be secure, with path "/" and a domain without a leading dot']);
  if (/^__secure-/i.test(name) && !secure) problems.push(['name', 'a __Secure- cookie must be secure']);
  if (expires !== -1 && !(expires >= 0 && expires <= MAX_COOKIE_EXPIRES))
    problems.push(['expires', `expected -1 (a session cookie) or Unix seconds from 0 to ${MAX_COOKIE_EXPIRES} (the end of year 9999)`]);
  if (partitionKey && (!isWebOrigin(partitionKey) || !secure))
    problems.push(['partitionKey', 'expected the top-level site as an http(s) origin such as "https://example.com", on a secure cookie']);
  return problems;
}

const NameValue = z.object({ name: text(16_384), value: z.string() }).strict();

const IndexedDbIndex = z
  .object({
    name: z.string(),
    keyPath: z.string().optional(),
    keyPathArray: z.array(z.string()).optional(),
    multiEntry: z.boolean(),
    unique: z.boolean(),
  })
  .strict();

const IndexedDbRecord = z
  .object({
    key: z.unknown().optional(),
    keyEncoded: z.unknown().optional(),
    value: z.unknown().optional(),
    valueEncoded: z.unknown().optional(),
  })
  .strict();

/** One IndexedDB database as Playwright 1.65 snapshots it (records keep Playwright's own serialisation). */
export const IndexedDbDatabase = z
  .object({
    name: z.string(),
    version: z.number().int(),
    stores: z.array(
      z
        .object({
          name: z.string(),
          autoIncrement: z.boolean(),
          keyPath: z.string().optional(),
          keyPathArray: z.array(z.string()).optional(),
          records: z.array(IndexedDbRecord),
          indexes: z.array(IndexedDbIndex),
        })
        .strict(),
    ),
  })
  .strict();

export const StorageOrigin = z
  .object({
    origin: z
      .string()
      .max(2048)
      .refine(isWebOrigin, 'expected an http(s) origin such as "https://example.com" (scheme, host and port only)'),
    localStorage: z.array(NameValue),
    indexedDB: z.array(IndexedDbDatabase).optional(),
  })
  .strict();

export const StorageState = z
  .object({
    cookies: z.array(StorageCookie).max(MAX_COOKIES),
    origins: z
      .array(StorageOrigin)
      .max(
        MAX_ORIGINS,
        `at most ${MAX_ORIGINS} origins (MAX_ORIGINS): each is restored by loading it in a page, one after another; keep the origins your login needs`,
      ),
  })
  .strict()
  .describe("Playwright's storage state: cookies, and per origin its localStorage (and IndexedDB when captured).");
export type StorageState = z.infer<typeof StorageState>;

function isWebOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}

/** Bytes of a state as JSON, the measure of every storage-state limit. */
export function stateBytes(state: unknown): number {
  return Buffer.byteLength(JSON.stringify(state) ?? '');
}

export function stateTooLarge(bytes: number, what: string): ServiceError {
  return new ServiceError(
    'payload_too_large',
    `${what} is ${bytes} bytes as JSON, over the limit of ${MAX_STORAGE_STATE_BYTES} bytes (MAX_STORAGE_STATE_BYTES).`,
    { details: { bytes, limit: MAX_STORAGE_STATE_BYTES } },
  );
}

/**
 * A caller's storage state, checked for depth and size before its shape: `invalid_argument` names the bad field
 * (e.g. `storageState.cookies.0.sameSite`), never its value, so a cookie never appears in an error.
 */
export function parseStorageState(value: unknown, field = 'storageState'): StorageState {
  // Depth first: JSON.stringify recurses, and a state nested 100,000 deep overflowed the stack (a 500).
  checkDepth(value, field);
  const bytes = stateBytes(value);
  if (bytes > MAX_STORAGE_STATE_BYTES) throw stateTooLarge(bytes, field);
  return parseInput(z.object({ [field]: StorageState }), { [field]: value }, field)[field] as StorageState;
}
