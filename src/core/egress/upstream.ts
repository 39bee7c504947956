import type { OutgoingHttpHeaders, RequestOptions } from 'node:http';
import { connect, type Socket } from 'node:net';
import { ServiceError } from '../errors.js';
import { EgressRefusedError, type EgressPolicy } from './policy.js';

/** A session's upstream proxy as session_start takes it (src/core/session/options.ts validates the shape). */
export interface UpstreamProxyConfig {
  server: string;
  username?: string;
  password?: string;
  bypass?: string;
}

const MAX_CONNECT_ANSWER_BYTES = 16 * 1024;

/**
 * The outbound side of a session's filtering proxy when the session asked for an upstream proxy: the filtering proxy
 * still resolves and checks every target, then reaches the checked address through the upstream (CONNECT for tunnels,
 * absolute-form requests for plain HTTP), with Proxy-Authorization when credentials were given. The upstream's own
 * address is checked once, at session start, and pinned.
 */
export class UpstreamProxy {
  private constructor(
    /** host:port of the upstream as the caller named it: safe to show (never the credentials). */
    readonly name: string,
    private readonly address: { address: string; family: 4 | 6; port: number },
    private readonly authorization: string | undefined,
    private readonly bypass: string[],
    private readonly connectTimeoutMs: number,
  ) {}

  /** Checks the upstream against the policy; refused: `url_not_allowed` naming proxy.server. */
  static async open(config: UpstreamProxyConfig, policy: EgressPolicy, connectTimeoutMs: number): Promise<UpstreamProxy> {
    const url = new URL(config.server);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = Number(url.port || 80);
    let checked: Array<{ address: string; family: 4 | 6 }>;
    try {
      checked = await policy.resolve(host, port);
    } catch (err) {
      if (err instanceof EgressRefusedError) {
        throw new ServiceError(
          'url_not_allowed',
          `proxy.server ${url.host} is refused by the egress policy "${policy.name}" (${err.reason}). The operator can open it with --egress-allow ${url.host}.`,
          { details: { field: 'proxy.server', host, port } },
        );
      }
      throw new ServiceError('invalid_argument', `proxy.server ${url.host}: the host name could not be resolved.`, {
        details: { field: 'proxy.server' },
      });
    }
    const authorization =
      config.username === undefined && config.password === undefined
        ? undefined
        : `Basic ${Buffer.from(`${config.username ?? ''}:${config.password ?? ''}`).toString('base64')}`;
    const bypass = (config.bypass ?? '')
      .split(',')
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean);
    return new UpstreamProxy(url.host, { ...checked[0]!, port }, authorization, bypass, connectTimeoutMs);
  }

  /** Whether a request to `host` goes through the upstream, or straight out (proxy.bypass). */
  carries(host: string): boolean {
    const name = host.toLowerCase().replace(/^\[|\]$/g, '');
    return !this.bypass.some((rule) => {
      const suffix = rule.startsWith('*.') ? rule.slice(1) : rule;
      return name === rule || (suffix.startsWith('.') && (name.endsWith(suffix) || name === suffix.slice(1)));
    });
  }

  /** A tunnel to the checked `address`:`port` through the upstream (CONNECT), within the connect timeout. */
  tunnel(address: string, port: number): Promise<Socket> {
    const target = `${address.includes(':') ? `[${address}]` : address}:${port}`;
    return new Promise((resolve, reject) => {
      const socket = connect({ host: this.address.address, port: this.address.port, family: this.address.family });
      let answer = Buffer.alloc(0);
      const fail = (err: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new Error(`the upstream proxy ${this.name} did not open a tunnel to ${target} within ${this.connectTimeoutMs} ms`)),
        this.connectTimeoutMs,
      );
      socket.once('error', (err) => fail(new Error(`the upstream proxy ${this.name} could not be reached: ${err.message}`)));
      socket.once('connect', () => {
        const auth = this.authorization ? `Proxy-Authorization: ${this.authorization}\r\n` : '';
        socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
      });
      const onData = (chunk: Buffer) => {
        answer = Buffer.concat([answer, chunk]);
        const end = answer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (answer.length > MAX_CONNECT_ANSWER_BYTES) fail(new Error(`the upstream proxy ${this.name} sent an oversized answer`));
          return;
        }
        socket.off('data', onData);
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer.subarray(0, end).toString('latin1'))?.[1] ?? 0);
        if (status < 200 || status > 299) return fail(new Error(upstreamRefusal(this.name, target, status)));
        clearTimeout(timer);
        socket.removeAllListeners('error');
        const rest = answer.subarray(end + 4);
        if (rest.length) socket.unshift(rest);
        resolve(socket);
      };
      socket.on('data', onData);
    });
  }

  /** Options for a plain-HTTP request to the checked address, sent in absolute form to the upstream. */
  requestOptions(target: { address: string; port: number; path: string }): Pick<RequestOptions, 'host' | 'port' | 'family' | 'path'> & {
    headers: OutgoingHttpHeaders;
  } {
    const host = target.address.includes(':') ? `[${target.address}]` : target.address;
    return {
      host: this.address.address,
      port: this.address.port,
      family: this.address.family,
      path: `http://${host}:${target.port}${target.path}`,
      headers: this.authorization ? { 'proxy-authorization': this.authorization } : {},
    };
  }
}

export function upstreamAuthRefused(name: string): string {
  return `the upstream proxy ${name} asked for other credentials (407 Proxy Authentication Required); check proxy.username and proxy.password`;
}

function upstreamRefusal(name: string, target: string, status: number): string {
  if (status === 407) return upstreamAuthRefused(name);
  return status ? `the upstream proxy ${name} answered ${status} to CONNECT ${target}` : `the upstream proxy ${name} sent no HTTP answer`;
}
