import type { BrowserContext, Page, Route } from 'playwright-core';
import type { Logger } from 'pino';
import type { EventLog, PageEvent } from '../page/events.js';
import type { SessionOptions } from './options.js';
import { TypeInterception, type BlockedType } from './interception.js';
import { UrlGlob } from './url-glob.js';

const MAX_URLS_NAMED = 3;
/**
 * The most work (UrlGlob steps, about 5 ns each) matching one request's URL against the session's globs may take;
 * a URL that needs more is blocked. Reached only by URLs of hundreds of thousands of characters.
 */
export const GLOB_MATCH_BUDGET = 20_000_000;

/**
 * blockResources and blockUrls of a session: matching requests of every page of the context are aborted before they
 * leave the browser, counted, and reported as one `blocked` page event per run of blocked requests (its count grows
 * until an operation has reported it).
 *
 * Resource types are blocked by Chromium itself (TypeInterception: CDP Fetch with resource-type patterns on each page
 * and out-of-process frame), so only requests of those types pause; a Playwright route on every URL would pause each
 * request of the session, the page's scripts and stylesheets included, for a round trip through this process.
 * blockUrls globs are one Playwright route whose URL test is UrlGlob (Playwright's glob syntax, matched without
 * backtracking): Playwright's own glob route is a RegExp that can backtrack for hours on one URL.
 *
 * A context whose proxy asks for credentials is the exception: Playwright answers the proxy's 407 through its own CDP
 * Fetch client, which then pauses every request anyway, and on Chromium 150 a second Fetch client on the page takes the
 * 407 from it (the page loads empty). There the types are blocked by a route, at no extra pause.
 */
export class RequestBlocker {
  /** Requests blocked since the session started. */
  total = 0;
  private event: PageEvent | undefined;
  private reasons = new Map<string, number>();
  private urls: string[] = [];
  private readonly pages = new WeakMap<Page, Promise<void>>();
  private types: readonly BlockedType[] = [];
  private routed = false;

  private constructor(
    private readonly context: BrowserContext,
    private readonly log: EventLog,
    private readonly logger: Logger,
  ) {}

  /** Starts blocking on every page of `context`, present and future; undefined when the options block nothing. */
  static async install(
    context: BrowserContext,
    options: SessionOptions,
    log: EventLog,
    logger: Logger,
    proxyAuth: boolean,
  ): Promise<RequestBlocker | undefined> {
    const types = options.blockResources ?? [];
    const globs = options.blockUrls ?? [];
    if (!types.length && !globs.length) return undefined;
    const blocker = new RequestBlocker(context, log, logger);
    if (globs.length) {
      const matchers = globs.map((glob) => UrlGlob.compile(glob));
      await context.route(
        (url) => blocker.matchesGlobs(matchers, url.href),
        (route) => blocker.block(route, 'blockUrls'),
      );
    }
    if (types.length) {
      blocker.types = types;
      if (proxyAuth) await blocker.routeTypes();
      else {
        context.on('page', (page) => void blocker.ready(page));
        for (const page of context.pages()) await blocker.ready(page);
      }
    }
    return blocker;
  }

  /**
   * Resolves once `page`'s requests of the blocked types are intercepted. Pages the session opens itself await it
   * before their first navigation; a popup is set up as soon as the context reports it.
   */
  ready(page: Page): Promise<void> {
    let ready = this.pages.get(page);
    if (!ready && this.types.length) {
      ready = this.intercept(page);
      this.pages.set(page, ready);
    }
    return ready ?? Promise.resolve();
  }

  private async intercept(page: Page): Promise<void> {
    try {
      await TypeInterception.start(page, this.types, (type, url) => this.count(type, url));
    } catch (err) {
      if (page.isClosed() || /closed|detached|crash/i.test(String(err))) return;
      // A browser whose CDP lacks what TypeInterception needs still blocks, the slower way.
      this.logger.warn({ err }, 'blocking resource types by CDP failed; using a route for the session instead');
      await this.routeTypes().catch((routeErr: unknown) =>
        this.logger.warn({ err: routeErr }, 'routing the blocked resource types failed'),
      );
    }
  }

  private matchesGlobs(matchers: UrlGlob[], url: string): boolean {
    let budget = GLOB_MATCH_BUDGET;
    for (const matcher of matchers) {
      const before = matcher.steps;
      const matched = matcher.matches(url, budget);
      if (matched === undefined) {
        this.logger.warn({ urlLength: url.length }, 'a URL too long to match against the blockUrls globs in time; blocked');
        return true;
      }
      if (matched) return true;
      budget -= matcher.steps - before;
    }
    return false;
  }

  private async routeTypes(): Promise<void> {
    if (this.routed) return;
    this.routed = true;
    const types = new Set<string>(this.types);
    await this.context.route('**/*', (route) => {
      const type = route.request().resourceType();
      return types.has(type) ? this.block(route, type) : route.fallback();
    });
  }

  private async block(route: Route, reason: string): Promise<void> {
    this.count(reason, route.request().url());
    await route.abort('blockedbyclient').catch(() => undefined);
  }

  private count(reason: string, url: string): void {
    this.total++;
    const last = this.event;
    const log = this.log;
    const growing = last !== undefined && last.seq === log.lastSeq && last.seq > log.reportedUpTo;
    if (!growing) {
      this.reasons = new Map();
      this.urls = [];
    }
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    if (this.urls.length < MAX_URLS_NAMED) this.urls.push(url.slice(0, 200));
    const count = [...this.reasons.values()].reduce((sum, n) => sum + n, 0);
    const message = blockedMessage(count, this.reasons, this.urls);
    if (growing) {
      last.count = count;
      last.message = message;
      return;
    }
    log.record({ type: 'blocked', count, message, url });
    this.event = log.all[log.all.length - 1];
  }
}

function blockedMessage(count: number, reasons: Map<string, number>, urls: string[]): string {
  const why = [...reasons].map(([reason, n]) => `${reason} ${n}`).join(', ');
  const more = count > urls.length ? ', ...' : '';
  return `${count} request${count === 1 ? '' : 's'} blocked by the session's options (${why}): ${urls.join(', ')}${more}.`;
}
