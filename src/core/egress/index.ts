import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { ServiceError } from '../errors.js';
import { ContextEgress } from './context.js';
import { createDispatcher, fetchVia } from './fetch.js';
import { EgressPolicy, parseAllowRule, type EgressPolicyName } from './policy.js';
import { EgressProxy } from './proxy.js';
import { UpstreamProxy, type UpstreamProxyConfig } from './upstream.js';

export { contextEgress, checkNavigationEgress, watchRefusedNavigation, type ContextProxyOptions, type EgressSession } from './context.js';
export { endsOnRefusal } from './fetch.js';
export { EGRESS_POLICIES, EgressRefusedError, type EgressPolicyName } from './policy.js';
export type { UpstreamProxyConfig } from './upstream.js';

/** Connect and response-header bound of every outbound connection the server makes for a caller. */
export const DEFAULT_OUTBOUND_TIMEOUT_MS = 15_000;
/**
 * Chromium flags without which traffic could leave around the proxy: QUIC, and WebRTC's UDP (STUN, TURN/UDP, host
 * candidates). Headless Chromium reads only `--webrtc-ip-handling-policy` (the `--force-` form, read by the headed
 * browser, left 5-10 STUN requests per connection reaching loopback). Remote ICE candidates named `*.local` are still
 * resolved by multicast DNS (224.0.0.251:5353) under that policy; the resolver rule fails those names first.
 */
const PROXY_ONLY_ARGS = [
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--host-resolver-rules=MAP *.local ~NOTFOUND',
];

export interface EgressConfig {
  /** Unset: "all", unless a door that accepts remote callers asks for "public" (see preferPolicy). */
  egressPolicy?: EgressPolicyName;
  /** HOST[:PORT], IP[:PORT] or CIDR targets opened despite the policy. */
  egressAllow?: string[];
  outboundTimeoutMs?: number;
  /** The remote browser hosts' endpoints (--playwright-endpoint, --cdp-endpoint): "public" needs them on loopback. */
  browserEndpoints?: string[];
  logger: Logger;
}

/** The server's egress boundary: the browser's proxy per context, the server's own fetch, and the checks before a navigation. */
export class Egress {
  private fallback: EgressPolicyName = 'all';
  private current: EgressPolicy | undefined;
  private readonly dispatchers = new Map<number, Dispatcher>();

  constructor(private readonly config: EgressConfig) {
    for (const rule of config.egressAllow ?? []) {
      try {
        parseAllowRule(rule);
      } catch (err) {
        throw new ServiceError('invalid_argument', (err as Error).message);
      }
    }
  }

  /** A door's default when the operator chose no policy; it has no effect once the policy is in use. */
  preferPolicy(name: EgressPolicyName): void {
    if (!this.current) this.fallback = name;
  }

  /** The policy in force; fixed from its first use on (the browser's flags and contexts depend on it). */
  get policy(): EgressPolicy {
    return (this.current ??= new EgressPolicy(this.config.egressPolicy ?? this.fallback, this.config.egressAllow));
  }

  get connectTimeoutMs(): number {
    return this.config.outboundTimeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  }

  /** Launch flags that keep the browser's traffic on the proxy. */
  browserArgs(): string[] {
    return this.policy.name === 'public' ? PROXY_ONLY_ARGS : [];
  }

  /**
   * A proxy for one new browser context, or undefined when nothing is filtered (the context then uses the session's
   * upstream proxy, if any, directly). With an upstream, its own address is checked against the policy first.
   */
  async openContext(upstreamConfig?: UpstreamProxyConfig): Promise<ContextEgress | undefined> {
    const policy = this.policy;
    if (policy.name === 'all') return undefined;
    this.checkBrowserReach();
    const upstream = upstreamConfig ? await UpstreamProxy.open(upstreamConfig, policy, this.connectTimeoutMs) : undefined;
    const proxy = await EgressProxy.start({ policy, connectTimeoutMs: this.connectTimeoutMs, logger: this.config.logger, upstream });
    return new ContextEgress(proxy, policy);
  }

  /**
   * `fetch` for a request the server makes for a caller (model APIs, MCP integrations): policy-checked addresses, a
   * bounded connect time, response headers within `headersTimeoutMs` (default: the connect bound), aborted by `signal`.
   */
  fetch(options: { headersTimeoutMs?: number; signal?: AbortSignal } = {}): typeof fetch {
    const headersTimeoutMs = options.headersTimeoutMs ?? this.connectTimeoutMs;
    let dispatcher = this.dispatchers.get(headersTimeoutMs);
    if (!dispatcher) {
      dispatcher = createDispatcher({
        policy: this.policy,
        connectTimeoutMs: this.connectTimeoutMs,
        headersTimeoutMs,
        logger: this.config.logger,
      });
      this.dispatchers.set(headersTimeoutMs, dispatcher);
    }
    return fetchVia(dispatcher, options.signal);
  }

  async close(): Promise<void> {
    const all = [...this.dispatchers.values()];
    this.dispatchers.clear();
    await Promise.all(all.map((dispatcher) => dispatcher.close().catch(() => undefined)));
  }

  /**
   * The per-context proxy listens on this machine's loopback: a browser host elsewhere could not reach it. With the
   * policy "public", every browser host must be on loopback; checked at start-up and at each session start.
   */
  checkBrowserReach(): void {
    if (this.policy.name !== 'public') return;
    const remote = (this.config.browserEndpoints ?? []).map(hostOf).filter((host) => host !== undefined && !isLoopback(host));
    if (remote.length) {
      throw new ServiceError(
        'browser_unavailable',
        `The egress policy "public" needs the browsers on this machine (each session's proxy listens on 127.0.0.1), but browser hosts run on ${[...new Set(remote)].join(', ')}. Run the browsers here, or pass --egress-policy all and filter egress on the browser hosts' network (docs/egress.md).`,
      );
    }
  }
}

/** The host name of an endpoint (no credentials: only the host part is ever shown). */
function hostOf(endpoint: string): string | undefined {
  try {
    return new URL(endpoint).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || (isIP(host) === 4 ? host.startsWith('127.') : host === '::1');
}
