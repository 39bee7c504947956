import type { BrowserContext, Route } from 'playwright-core';
import type { EventLog, PageEvent } from './events.js';
import type { SessionOptions } from './options.js';

const MAX_URLS_NAMED = 3;

/**
 * blockResources and blockUrls of a session: matching requests of every page of the context are aborted before they
 * leave the browser, counted, and reported as one `blocked` page event per run of blocked requests (its count grows
 * until an operation has reported it).
 */
export class RequestBlocker {
  /** Requests blocked since the session started. */
  total = 0;
  private event: PageEvent | undefined;
  private reasons = new Map<string, number>();
  private urls: string[] = [];

  private constructor(private readonly log: EventLog) {}

  /** Installs the routes on `context`; undefined when the options block nothing. */
  static async install(context: BrowserContext, options: SessionOptions, log: EventLog): Promise<RequestBlocker | undefined> {
    const types = new Set<string>(options.blockResources ?? []);
    const globs = options.blockUrls ?? [];
    if (!types.size && !globs.length) return undefined;
    const blocker = new RequestBlocker(log);
    // Playwright runs the route registered last first; an unmatched request falls back to the next one.
    for (const glob of globs) await context.route(glob, (route) => blocker.block(route, 'blockUrls'));
    if (types.size)
      await context.route('**/*', (route) =>
        types.has(route.request().resourceType()) ? blocker.block(route, route.request().resourceType()) : route.fallback(),
      );
    return blocker;
  }

  private async block(route: Route, reason: string): Promise<void> {
    this.total++;
    this.record(reason, route.request().url());
    await route.abort('blockedbyclient').catch(() => undefined);
  }

  private record(reason: string, url: string): void {
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
