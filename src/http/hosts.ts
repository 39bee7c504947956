import type { IncomingMessage } from 'node:http';
import { ServiceError } from '../core/errors.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

export interface HostPolicyOptions {
  /** Bind address. */
  host: string;
  allowedHosts: string[];
  keysConfigured: boolean;
}

export function isLoopbackBind(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/**
 * DNS-rebinding protection: which Host (and Origin) names requests may carry. `undefined` means any, which is
 * only allowed when the server is off loopback and protected by keys.
 */
export function allowedHostNames(options: HostPolicyOptions): Set<string> | undefined {
  const extra = options.allowedHosts.map(hostNameOf);
  if (isLoopbackBind(options.host) || extra.length > 0) return new Set([...LOOPBACK_NAMES, ...extra]);
  if (options.keysConfigured) return undefined;
  throw new Error(
    `Refusing to listen on ${options.host} without protection: any machine that can reach the port, and any web page through DNS rebinding, ` +
      'could drive the browser. Pass --api-key KEY (or SVC_API_KEYS=...) to require a key, and/or --allowed-hosts with the host names ' +
      'clients use to reach this server, or bind to 127.0.0.1.',
  );
}

/** The host name of a Host header or --allowed-hosts entry, lower-cased and without the port ("[::1]" keeps its brackets). */
export function hostNameOf(value: string): string {
  const host = value.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.split(':')[0]!;
}

/** Rejects requests whose Host or Origin is not one this server answers to. */
export function checkHost(req: IncomingMessage, allowed: Set<string> | undefined): void {
  if (!allowed) return;
  const host = req.headers.host;
  if (!host || !allowed.has(hostNameOf(host))) {
    throw new ServiceError(
      'host_not_allowed',
      `Host "${host ?? ''}" is not allowed. Reach the server as localhost, or start it with --allowed-hosts naming this host.`,
    );
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let originHost: string;
  try {
    originHost = new URL(origin).hostname.toLowerCase();
  } catch {
    throw new ServiceError('host_not_allowed', `Origin "${origin}" is not a valid origin.`);
  }
  if (!allowed.has(originHost))
    throw new ServiceError('host_not_allowed', `Origin "${origin}" is not allowed; web pages from other sites may not call this server.`);
}
