import { errors as playwrightErrors, type Frame, type Response } from 'playwright-core';
import { z } from 'zod';
import { DEFAULTS } from './config.js';
import { checkNavigationEgress, watchRefusedNavigation } from './egress/index.js';
import { cancelledError, isServiceError, ServiceError, throwIfAborted } from './errors.js';
import { type OperationContext } from './operation.js';
import { runText } from './recording/index.js';
import { withTimeout } from './time.js';
import type { Session, WatchedPage } from './sessions.js';

/** How long a page to be navigated away from has to answer a trivial script before it is replaced. */
const UNRESPONSIVE_PROBE_MS = 2_000;

export const WaitUntil = z.enum(['load', 'domcontentloaded', 'networkidle']);

export const NavigateOptions = z
  .object({
    referer: z.string().optional().describe('Referer header.'),
    timeout: z.number().int().positive().max(600_000).optional().describe('ms (default 30000).'),
    waitUntil: WaitUntil.optional().describe('When it counts as loaded (default "load").'),
  })
  .strict();

export const NavigateRequest = z
  .object({
    url: z.string().min(1).describe('Absolute http(s) URL to open.'),
    options: NavigateOptions.optional(),
    frameId: z.string().nullable().optional().describe('Navigate this frame instead of the main frame.'),
    streamResponse: z.boolean().optional().describe('Stream progress (SSE over REST, progress notifications over MCP).'),
    pageText: z.boolean().optional().describe('Also answer the page text with refs.'),
    maxTokens: z.number().int().min(100).optional().describe('Most tokens of page text; extract with the cursor reads on.'),
  })
  .strict();
export type NavigateRequest = z.infer<typeof NavigateRequest>;

export const NavigationResponse = z.object({
  url: z.string().describe('Final URL of the response, after redirects.'),
  status: z.number().describe('HTTP status; a 404 page is a successful navigation with status 404.'),
  statusText: z.string(),
  ok: z.boolean().describe('True for statuses 200-299.'),
  headers: z.record(z.string(), z.string()).describe('Response headers, names lower-cased.'),
  redirectChain: z.array(z.string()).describe('URLs that redirected here, first request first.'),
  fromServiceWorker: z.boolean(),
  serverAddr: z.object({ ipAddress: z.string(), port: z.number() }).nullable(),
  frameId: z.string().describe('Frame that navigated.'),
  timing: z.object({ startTime: z.number(), responseStart: z.number(), responseEnd: z.number() }).partial().optional(),
});
export type NavigationResponse = z.infer<typeof NavigationResponse>;

export interface NavigatePolicy {
  allowFileUrls: boolean;
}

const STOP_TIMEOUT_MS = 2_000;
const ALWAYS_ALLOWED = new Set(['http:', 'https:']);
const LOCAL_SCHEMES = new Set(['file:', 'data:', 'javascript:']);

/** Parses and checks a URL before it reaches the browser. */
export function checkUrl(raw: string, policy: NavigatePolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ServiceError('invalid_argument', `"${raw}" is not an absolute URL. Include the scheme, e.g. https://example.com/.`);
  }
  if (ALWAYS_ALLOWED.has(url.protocol) || url.href === 'about:blank') return url;
  if (LOCAL_SCHEMES.has(url.protocol)) {
    if (policy.allowFileUrls) return url;
    throw new ServiceError(
      'url_not_allowed',
      `${url.protocol} URLs are refused; only http and https are allowed unless the server runs with --allow-file-urls.`,
    );
  }
  throw new ServiceError('url_not_allowed', `${url.protocol} URLs are not supported; use http or https.`);
}

/** Navigates the session's page (or one of its frames) and answers the main resource's response. */
export async function navigate(
  session: Session,
  req: NavigateRequest,
  policy: NavigatePolicy,
  ctx: OperationContext = {},
): Promise<NavigationResponse | null> {
  const url = checkUrl(req.url, policy);
  // A page looping since it loaded would hold this navigation for its whole timeout (the page is being left anyway).
  if (!req.frameId) await session.replaceIfUnresponsive(UNRESPONSIVE_PROBE_MS);
  const frame = req.frameId ? session.frame(req.frameId) : session.page.mainFrame();
  const timeout = req.options?.timeout ?? DEFAULTS.navigationTimeoutMs;
  await checkNavigationEgress(session, url, timeout);
  const waitUntil = req.options?.waitUntil ?? 'load';
  const frameId = session.frameId(frame);

  ctx.progress?.({ message: `navigating to ${url.href}`, data: { stage: 'started', url: url.href, frameId } });
  const stopProgress = reportStages(frame, ctx);
  const commits = watchCommits(frame);
  const refusals = watchRefusedNavigation(session, frame, url.href);
  const goto = () => frame.goto(url.href, { timeout, waitUntil, referer: req.options?.referer });
  let response: Response | null;
  const cancelled = whenAborted(ctx.signal);
  try {
    throwIfAborted(ctx.signal);
    const loading = goto().catch((err: unknown) => {
      // The error page of an earlier failed navigation can commit late and cancel this one; it is not the user's doing.
      if (err instanceof Error && /interrupted by another navigation to "chrome-error:/.test(err.message)) return goto();
      throw err;
    });
    // A client that gives up frees the session at once; the next navigation supersedes the abandoned one.
    loading.catch(() => undefined);
    response = await Promise.race([loading, cancelled.promise]);
  } catch (err) {
    // Dropped before the new document committed (say, waiting for response headers): Chromium would keep the navigation
    // pending, and every later script call on the page waits for it. Stop it, so the page that was there stays usable.
    if (isServiceError(err) && err.code === 'cancelled' && !commits.committed) await stopLoading(session.watched);
    // A failed load is only over once Chromium has committed its error page; otherwise that commit cancels the next navigate.
    if (err instanceof Error && /net::ERR_/.test(err.message)) await commits.errorPage(2_000);
    if (err instanceof playwrightErrors.TimeoutError) {
      // Chromium holds back script calls to a page until its pending navigation commits: end the one that failed, so
      // it cannot commit later behind the caller's back and the probe reaches the document that stayed (which may
      // never yield: a script or dialogs in a loop keep every later navigation from committing).
      if (!commits.committed && frame === session.page.mainFrame()) await stopLoading(session.watched);
      session.checkResponsive();
    }
    throw refusals.error(err) ?? navigationError(err, url.href, timeout, waitUntil, session);
  } finally {
    refusals.dispose();
    cancelled.dispose();
    commits.dispose();
    stopProgress();
  }
  // The session's run (docs/replay.md) opens the same address again, a secret in it as its placeholder.
  if (!req.frameId) session.recording.steps.add({ method: 'goto', url: runText(session.recording.secrets, url.href) });
  // A redirect may carry a secret the session has seen (a sign-in's GET form): masked like every answer's URLs.
  const result = response ? (session.recording.secrets.maskDeep(await serializeResponse(response, frameId)) as NavigationResponse) : null;
  ctx.progress?.({
    message: result ? `finished with status ${result.status}` : 'finished without a network response',
    data: { stage: 'finished', status: result?.status ?? null },
  });
  return result;
}

async function stopLoading(page: WatchedPage): Promise<void> {
  const stop = page.cdp().then((cdp) => cdp.send('Page.stopLoading'));
  await withTimeout(stop, STOP_TIMEOUT_MS, () => new Error('stopLoading timed out')).catch(() => undefined);
}

/** A promise that rejects with `cancelled` when the signal fires (never otherwise). */
function whenAborted(signal: AbortSignal | undefined): { promise: Promise<never>; dispose(): void } {
  if (!signal) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let onAbort!: () => void;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(cancelledError());
  });
  signal.addEventListener('abort', onAbort, { once: true });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** Notices when `frame` commits a document, and when that is Chromium's error page (committed asynchronously after a failed load). */
function watchCommits(frame: Frame): { readonly committed: boolean; errorPage(ms: number): Promise<void>; dispose(): void } {
  const page = frame.page();
  let onErrorPage: (() => void) | undefined;
  let committed = false;
  let sawErrorPage = false;
  const listener = (navigated: Frame) => {
    if (navigated !== frame) return;
    committed = true;
    if (!navigated.url().startsWith('chrome-error:')) return;
    sawErrorPage = true;
    onErrorPage?.();
  };
  page.on('framenavigated', listener);
  return {
    get committed() {
      return committed;
    },
    errorPage: (ms) =>
      sawErrorPage || frame.isDetached()
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            onErrorPage = () => {
              clearTimeout(timer);
              resolve();
            };
          }),
    dispose: () => page.off('framenavigated', listener),
  };
}

function reportStages(frame: Frame, ctx: OperationContext): () => void {
  if (!ctx.progress) return () => undefined;
  const page = frame.page();
  const progress = ctx.progress;
  const onResponse = (response: Response) => {
    if (response.frame() === frame && response.request().isNavigationRequest()) {
      progress({
        message: `response ${response.status()} from ${response.url()}`,
        data: { stage: 'response', status: response.status(), url: response.url() },
      });
    }
  };
  const onDomContentLoaded = () => progress({ message: 'DOM content loaded', data: { stage: 'domcontentloaded' } });
  const onLoad = () => progress({ message: 'page loaded', data: { stage: 'load' } });
  page.on('response', onResponse);
  const isMain = frame === page.mainFrame();
  if (isMain) {
    page.on('domcontentloaded', onDomContentLoaded);
    page.on('load', onLoad);
  }
  return () => {
    page.off('response', onResponse);
    if (isMain) {
      page.off('domcontentloaded', onDomContentLoaded);
      page.off('load', onLoad);
    }
  };
}

async function serializeResponse(response: Response, frameId: string): Promise<NavigationResponse> {
  const redirectChain: string[] = [];
  for (let request = response.request().redirectedFrom(); request; request = request.redirectedFrom()) redirectChain.unshift(request.url());
  const [headers, serverAddr] = await Promise.all([
    response.allHeaders().catch(() => response.headers()),
    response.serverAddr().catch(() => null),
  ]);
  const timing = response.request().timing();
  return {
    url: response.url(),
    status: response.status(),
    statusText: response.statusText(),
    ok: response.ok(),
    headers,
    redirectChain,
    fromServiceWorker: response.fromServiceWorker(),
    serverAddr,
    frameId,
    timing: { startTime: timing.startTime, responseStart: timing.responseStart, responseEnd: timing.responseEnd },
  };
}

const NET_ERRORS: Array<[RegExp, string]> = [
  [/ERR_NAME_NOT_RESOLVED/, 'the host name could not be resolved (DNS). Check the spelling of the host'],
  [/ERR_CONNECTION_REFUSED/, 'the server refused the connection. Is it running on that port?'],
  [/ERR_CONNECTION_(RESET|CLOSED)|ERR_EMPTY_RESPONSE/, 'the server closed the connection without a response'],
  [/ERR_ADDRESS_UNREACHABLE|ERR_INTERNET_DISCONNECTED|ERR_NETWORK_CHANGED/, 'the address is unreachable from this machine'],
  [/ERR_CERT_|ERR_SSL_/, 'the TLS certificate or handshake was rejected'],
  [/ERR_TOO_MANY_REDIRECTS/, 'the site redirected too many times'],
  [/ERR_ABORTED/, 'the navigation was aborted (the page started another navigation, or the response was a download)'],
];

function navigationError(err: unknown, url: string, timeout: number, waitUntil: string, session: Session): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof playwrightErrors.TimeoutError) {
    return new ServiceError(
      'navigation_timeout',
      `Navigation to ${url} did not reach "${waitUntil}" within ${timeout} ms. The page may still be loading; raise options.timeout or use waitUntil "domcontentloaded".`,
      { cause: err },
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  // The browser died or the session was ended meanwhile: say that, not the symptom.
  if (session.closedReason) return new ServiceError('session_closed', session.closedReason, { cause: err });
  if (/Frame was detached|frame got detached/i.test(message)) {
    return new ServiceError('frame_not_found', 'The frame was removed from the page during the navigation.', { cause: err });
  }
  if (/Target (page, context or browser )?(has been |was )?closed|crash/i.test(message)) {
    return new ServiceError('page_crashed', `The page closed or crashed while loading ${url}. Navigate again to retry.`, { cause: err });
  }
  for (const [pattern, explanation] of NET_ERRORS) {
    if (pattern.test(message)) return new ServiceError('navigation_failed', `Could not load ${url}: ${explanation}.`, { cause: err });
  }
  const net = /net::ERR_[A-Z_]+/.exec(message)?.[0];
  return new ServiceError('navigation_failed', `Could not load ${url}${net ? ` (${net})` : ''}.`, { cause: err });
}
