import { devices, type BrowserContextOptions } from 'playwright-core';
import { z } from 'zod';
import { ServiceError } from '../errors.js';
import { RecordOption } from '../recording/record-option.js';
import { UrlGlob } from './url-glob.js';

export { RecordOption };

/**
 * The options of session_start, in one object: every door validates with it and the registry applies it when the
 * session's context is created. Fields added by other features (storage state, recording) go in this object too.
 */

export const MIN_VIEWPORT = 200;
export const MAX_VIEWPORT = 4096;
/** The shortest idle timeout a session may ask for; the longest is the server's --session-idle-timeout. */
export const MIN_SESSION_TIMEOUT_MS = 1_000;
export const BLOCKABLE_RESOURCES = ['image', 'media', 'font', 'stylesheet'] as const;
const MAX_HEADERS = 50;
const MAX_BLOCK_URLS = 50;

/**
 * Header names a session may not set: hop-by-hop and framing headers the browser owns, and the credentials headers
 * (extraHTTPHeaders go to every origin the page contacts, so a Cookie or Authorization would leak to third parties).
 */
export const REFUSED_HEADERS = new Set([
  'host',
  'cookie',
  'authorization',
  'proxy-authorization',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

const DEVICE_NAMES = Object.keys(devices);

/** Device names nearest to `name`: those containing it or contained in it first, then by edit distance. */
export function closeDeviceNames(name: string, max = 5): string[] {
  const wanted = squash(name);
  const scored = DEVICE_NAMES.map((candidate) => {
    const plain = squash(candidate);
    const contains = wanted.length > 0 && (plain.includes(wanted) || wanted.includes(plain));
    return { candidate, score: (contains ? 0 : 100) + editDistance(wanted, plain) };
  });
  return scored
    .sort((a, b) => a.score - b.score)
    .slice(0, max)
    .map((entry) => entry.candidate);
}

function squash(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

function validLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

function validTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const noLineBreak = (value: string) => !/[\r\n\0]/.test(value);
/*
 * Lengths and ranges are refinements, for their messages, each stated in the JSON Schema too (meta: maxLength, minimum,
 * maximum), so the tools/list a model reads says every limit before a call runs into it (docs/sessions.md).
 */
const text = (max: number) =>
  z
    .string()
    .refine((value) => value.length <= max, `at most ${max} characters`)
    .meta({ maxLength: max });
const line = (max: number) => text(max).refine(noLineBreak, 'no line breaks');
const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .number()
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, `a whole number from ${min} to ${max}`)
    .meta({ type: 'integer', minimum: min, maximum: max });
const between = (min: number, max: number) =>
  z
    .number()
    .refine((value) => value >= min && value <= max, `from ${min} to ${max}`)
    .meta({ minimum: min, ...(max < Number.MAX_VALUE ? { maximum: max } : {}) });
const size = integer(MIN_VIEWPORT, MAX_VIEWPORT);

export const SessionProxy = z
  .object({
    server: text(2048).refine(isProxyServer, 'expected http://HOST:PORT (no credentials in the URL: use username and password)'),
    username: line(256).optional(),
    password: line(256).optional(),
    bypass: line(2048).optional(),
  })
  .strict();
export type SessionProxy = z.infer<typeof SessionProxy>;

function isProxyServer(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' && !url.username && !url.password && (url.pathname === '/' || url.pathname === '') && !url.search;
  } catch {
    return false;
  }
}

export const SessionOptions = z
  .object({
    viewport: z.object({ width: size, height: size }).strict().optional(),
    device: text(100)
      .superRefine((name, ctx) => {
        if (name in devices) return;
        ctx.addIssue({
          code: 'custom',
          message: `unknown device "${name.slice(0, 100)}"; close matches: ${closeDeviceNames(name)
            .map((candidate) => `"${candidate}"`)
            .join(', ')}`,
        });
      })
      .optional()
      .describe('Playwright device name, e.g. "Pixel 7"'),
    locale: text(64).refine(validLocale, 'expected a BCP 47 locale such as "de-DE"').optional(),
    timezoneId: text(64).refine(validTimeZone, 'expected an IANA time zone such as "Europe/Berlin"').optional(),
    geolocation: z
      .object({
        latitude: between(-90, 90),
        longitude: between(-180, 180),
        accuracy: between(0, Number.MAX_VALUE).optional(),
      })
      .strict()
      .optional(),
    colorScheme: z.enum(['light', 'dark', 'no-preference']).optional(),
    reducedMotion: z.enum(['reduce', 'no-preference']).optional(),
    // A control character makes Chromium refuse every request's User-Agent header, and each navigation fails.
    userAgent: line(512)
      .refine((value) => value.length > 0, 'not empty')
      .refine((value) => ![...value].some((char) => char < ' ' || char === '\x7f'), 'no control characters')
      .optional(),
    extraHTTPHeaders: z
      .record(z.string(), line(8192))
      .superRefine((headers, ctx) => {
        const names = Object.keys(headers);
        if (names.length > MAX_HEADERS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_HEADERS} headers` });
        for (const name of names) {
          if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'not a header name' });
          else if (REFUSED_HEADERS.has(name.toLowerCase()) || /^(sec-|proxy-)/i.test(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: 'a header the browser owns or a credential sent to every origin; not allowed',
            });
        }
      })
      .meta({ maxProperties: MAX_HEADERS })
      .optional(),
    javaScriptEnabled: z.boolean().optional(),
    proxy: SessionProxy.optional(),
    blockResources: z
      .array(z.enum(BLOCKABLE_RESOURCES))
      .refine((types) => new Set(types).size === types.length, 'each type once')
      .meta({ uniqueItems: true })
      .optional(),
    blockUrls: z
      .array(
        line(2048)
          .refine((glob) => glob.length > 0, 'not empty')
          .superRefine((glob, ctx) => {
            try {
              UrlGlob.compile(glob);
            } catch (err) {
              ctx.addIssue({ code: 'custom', message: (err as Error).message });
            }
          }),
      )
      .refine((globs) => globs.length <= MAX_BLOCK_URLS, `at most ${MAX_BLOCK_URLS} globs`)
      .meta({ maxItems: MAX_BLOCK_URLS })
      .optional()
      .describe('URL globs'),
    timeoutMs: integer(MIN_SESSION_TIMEOUT_MS)
      .optional()
      .describe("idle timeout, ms; at most the server's --session-idle-timeout (default 900000)"),
    // Storage state and profiles (src/core/storage, src/core/profiles, docs/profiles.md): the service checks the state's shape and the
    // profile name (kept out of the schema: tools/list tokens) and loads the profile before the context starts.
    storageState: z.unknown().optional().describe('Playwright storage state (≤5 MiB, 3000 cookies, 100 origins)'),
    profile: text(64).optional().describe('saved profile name'),
    // A recording (src/core/recording, docs/recording.md) is an option like the others: the operator may deny it.
    record: RecordOption.optional(),
  })
  .strict();
export type SessionOptions = z.infer<typeof SessionOptions>;

/** SessionOptions as tools/list shows them on a server whose idle timeout is `serverIdleTimeoutMs`: timeoutMs's bound. */
export function listedSessionOptions(serverIdleTimeoutMs: number): z.ZodObject {
  return SessionOptions.extend({
    timeoutMs: integer(MIN_SESSION_TIMEOUT_MS, serverIdleTimeoutMs).optional().describe('idle timeout, ms'),
  });
}
export type SessionOptionName = keyof SessionOptions;
export const SESSION_OPTION_NAMES = Object.keys(SessionOptions.shape) as SessionOptionName[];

export const REDACTED = '***';

/** The options as SessionInfo shows them: the proxy password, header values (often keys) and storage state replaced by "***". */
export function redactOptions(options: SessionOptions): SessionOptions {
  const shown: SessionOptions = { ...options };
  if (options.proxy) shown.proxy = { ...options.proxy, ...(options.proxy.password === undefined ? {} : { password: REDACTED }) };
  if (options.extraHTTPHeaders)
    shown.extraHTTPHeaders = Object.fromEntries(Object.keys(options.extraHTTPHeaders).map((name) => [name, REDACTED]));
  // A storage state is credentials (cookies, tokens): SessionInfo tells only that the session started from one.
  if (options.storageState !== undefined) shown.storageState = REDACTED;
  return shown;
}

/** Which options callers may use, as the operator set it (--session-options-allowed / --session-options-denied). */
export interface SessionOptionsRules {
  /** Only these options; unset: all of them. */
  allowed?: readonly string[];
  /** Never these options. */
  denied?: readonly string[];
}

/** Throws at start-up when a rule names no option, so a typo cannot leave an option open. */
export function checkOptionRules(rules: SessionOptionsRules): void {
  for (const [flag, names] of [
    ['--session-options-allowed', rules.allowed],
    ['--session-options-denied', rules.denied],
  ] as const) {
    const unknown = (names ?? []).filter((name) => !(SESSION_OPTION_NAMES as string[]).includes(name));
    if (unknown.length)
      throw new ServiceError(
        'invalid_argument',
        `${flag}: no session option named ${unknown.join(', ')}; the options are ${SESSION_OPTION_NAMES.join(', ')}.`,
      );
  }
}

/** `option_not_allowed` naming the first option the operator does not allow. */
export function checkOptionsAllowed(options: SessionOptions, rules: SessionOptionsRules | undefined): void {
  if (!rules) return;
  for (const name of Object.keys(options)) {
    if ((options as Record<string, unknown>)[name] === undefined) continue;
    const refused = (rules.allowed && !rules.allowed.includes(name)) || rules.denied?.includes(name);
    if (refused)
      throw new ServiceError(
        'option_not_allowed',
        `The session option ${name} is not allowed on this server (the operator restricts session options); start the session without it.`,
        {
          details: { field: name },
        },
      );
  }
}

/** `invalid_argument` naming timeoutMs when it exceeds the server's idle timeout. */
export function checkTimeout(options: SessionOptions, serverIdleTimeoutMs: number): void {
  if (options.timeoutMs !== undefined && options.timeoutMs > serverIdleTimeoutMs)
    throw new ServiceError(
      'invalid_argument',
      `Invalid session options: timeoutMs: at most ${serverIdleTimeoutMs} on this server (--session-idle-timeout); at least ${MIN_SESSION_TIMEOUT_MS}.`,
      { details: { issues: [{ path: 'timeoutMs', message: `at most ${serverIdleTimeoutMs}` }] } },
    );
}

const DEFAULT_VIEWPORT = { width: 1280, height: 800 };

/** The browser-context options of a session (its proxy is the egress's to decide, see the registry). */
export function contextOptionsFor(options: SessionOptions): BrowserContextOptions {
  const { defaultBrowserType: _browser, ...device } = options.device ? devices[options.device]! : { defaultBrowserType: undefined };
  const blocking = Boolean(options.blockResources?.length || options.blockUrls?.length);
  return {
    viewport: DEFAULT_VIEWPORT,
    ...device,
    ...(options.viewport ? { viewport: options.viewport } : {}),
    ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    ...(options.locale !== undefined ? { locale: options.locale } : {}),
    ...(options.timezoneId !== undefined ? { timezoneId: options.timezoneId } : {}),
    ...(options.geolocation ? { geolocation: options.geolocation, permissions: ['geolocation'] } : {}),
    ...(options.colorScheme ? { colorScheme: options.colorScheme } : {}),
    ...(options.reducedMotion ? { reducedMotion: options.reducedMotion } : {}),
    ...(options.extraHTTPHeaders ? { extraHTTPHeaders: options.extraHTTPHeaders } : {}),
    ...(options.javaScriptEnabled !== undefined ? { javaScriptEnabled: options.javaScriptEnabled } : {}),
    // A service worker's fetches would not pass the routes that block requests.
    ...(blocking ? { serviceWorkers: 'block' as const } : {}),
  };
}
