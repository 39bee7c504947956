import type { BrowserContext, Frame, Request } from 'playwright-core';
import { ServiceError } from '../errors.js';
import type { EventLog, PageEvent } from '../page/events.js';
import { stateKey, type FeatureState } from '../page/state.js';
import { EgressRefusedError, urlPort, type EgressPolicy } from './policy.js';
import type { EgressProxy } from './proxy.js';

/** What the egress needs of a session (its leaf modules only, so egress and the session registry import no cycle). */
export interface EgressSession {
  readonly context: BrowserContext;
  readonly log: EventLog;
  readonly state: FeatureState;
}

/** The session's proxy; unset when the policy filters nothing. */
const CONTEXT_EGRESS = stateKey<ContextEgress | undefined>('egress.context', () => undefined);
const MAX_TARGETS_NAMED = 5;

/** The per-context options that send all of a browser context's traffic through its egress proxy. */
export interface ContextProxyOptions {
  proxy: { server: string; username?: string; password?: string; bypass?: string };
}

/** One browser context's proxy, and the `blocked` page events of its session. */
export class ContextEgress {
  private lastEvent: PageEvent | undefined;
  private targets: string[] = [];

  constructor(
    readonly proxy: EgressProxy,
    readonly policy: EgressPolicy,
  ) {}

  /**
   * Options for browser.newContext: all of the context's traffic through this proxy (Playwright adds <-loopback>), with
   * the proxy's own credentials, so no other process can use it.
   */
  get contextOptions(): ContextProxyOptions {
    return { proxy: { server: this.proxy.url, ...this.proxy.credentials } };
  }

  /** Links the proxy to the session using the context; the proxy closes with the context. */
  attach(session: EgressSession): void {
    session.state.set(CONTEXT_EGRESS, this);
    this.proxy.onRefused = (refusal) => this.recordBlocked(session, refusal);
    session.context.once('close', () => void this.proxy.close());
  }

  /** Refusals in a row become one `blocked` event whose count grows, until an operation has reported it. */
  private recordBlocked(session: EgressSession, refusal: EgressRefusedError): void {
    const target = `${refusal.host}:${refusal.port}`;
    const last = this.lastEvent;
    const log = session.log;
    if (last && last.seq === log.lastSeq && last.seq > log.reportedUpTo) {
      last.count = (last.count ?? 1) + 1;
      if (!this.targets.includes(target)) this.targets.push(target);
      last.message = blockedMessage(last.count, this.targets, this.policy.name);
      return;
    }
    this.targets = [target];
    log.record({ type: 'blocked', count: 1, message: blockedMessage(1, this.targets, this.policy.name) });
    this.lastEvent = log.all[log.all.length - 1];
  }
}

function blockedMessage(count: number, targets: string[], policy: string): string {
  const named = targets.slice(0, MAX_TARGETS_NAMED).join(', ') + (targets.length > MAX_TARGETS_NAMED ? ', ...' : '');
  return `${count} request${count === 1 ? '' : 's'} of the page refused by the egress policy "${policy}" (internal address): ${named}. The operator can open a target with --egress-allow HOST[:PORT].`;
}

/** The proxy's connect failure in the words navigate uses for the browser's own (Chromium only sees the proxy's refusal). */
function connectFailure(err: Error): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name could not be resolved (DNS). Check the spelling of the host';
  if (code === 'ECONNREFUSED') return 'the server refused the connection. Is it running on that port?';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'the address is unreachable from this machine';
  return err.message;
}

export function contextEgress(session: EgressSession): ContextEgress | undefined {
  return session.state.get(CONTEXT_EGRESS);
}

function refusedNavigation(url: string, refusal: EgressRefusedError, policy: string, redirectedFrom?: string): ServiceError {
  const via = redirectedFrom && redirectedFrom !== url ? `${redirectedFrom} redirected to ${url}, which` : url;
  return new ServiceError(
    'url_not_allowed',
    `Navigation refused: ${via} is refused by the egress policy "${policy}" (${refusal.reason}). The operator can open it with --egress-allow ${refusal.host.includes(':') ? `[${refusal.host}]` : refusal.host}:${refusal.port}, or run with --egress-policy all.`,
    { details: { policy, host: refusal.host, port: refusal.port, address: refusal.address } },
  );
}

/** Refuses a navigation whose host resolves to a refused address, before the browser is involved. */
export async function checkNavigationEgress(session: EgressSession, url: URL, timeoutMs: number): Promise<void> {
  const egress = contextEgress(session);
  if (!egress || (url.protocol !== 'http:' && url.protocol !== 'https:')) return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      egress.policy.resolve(url.hostname, urlPort(url)),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
  } catch (err) {
    // Names that do not resolve are the browser's to report (navigation_failed); only refusals end here.
    if (err instanceof EgressRefusedError) throw refusedNavigation(url.href, err, egress.policy.name);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Watches a navigation of `frame` for a request the proxy refused (a redirect to an internal address, say), so its
 * failure is answered `url_not_allowed` rather than a network error.
 */
export function watchRefusedNavigation(
  session: EgressSession,
  frame: Frame,
  url: string,
): { error(err: unknown): ServiceError | undefined; dispose(): void } {
  const egress = contextEgress(session);
  if (!egress) return { error: () => undefined, dispose: () => undefined };
  const started = performance.now();
  const failed: string[] = [];
  const page = frame.page();
  const onFailed = (request: Request) => {
    if (request.frame() === frame && request.isNavigationRequest()) failed.push(request.url());
  };
  page.on('requestfailed', onFailed);
  return {
    error: (err) => {
      // Only a network failure can be the proxy's doing; a timeout or a crash is not.
      if (!(err instanceof Error) || !/net::ERR_/.test(err.message)) return undefined;
      for (const candidate of [...failed, url]) {
        let target: URL;
        try {
          target = new URL(candidate);
        } catch {
          continue;
        }
        const host = target.hostname.replace(/^\[|\]$/g, '');
        const refusal = egress.proxy.refusalOf(host, urlPort(target), started);
        if (refusal) return refusedNavigation(candidate, refusal, egress.policy.name, url);
        const failure = egress.proxy.failureOf(host, urlPort(target), started);
        if (failure)
          return new ServiceError('navigation_failed', `Could not load ${candidate}: ${connectFailure(failure)}.`, { cause: failure });
      }
      return undefined;
    },
    dispose: () => page.off('requestfailed', onFailed),
  };
}
