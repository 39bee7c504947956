import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { classifyAddress, embeddedIPv4, unbracket } from './address.js';

export type EgressPolicyName = 'public' | 'all';
export const EGRESS_POLICIES: readonly EgressPolicyName[] = ['public', 'all'];

/** One --egress-allow entry: a host name, an address or a CIDR network, with an optional port. */
export interface AllowRule {
  text: string;
  host?: string;
  network?: BlockList;
  port?: number;
}

/** A connection the policy refused; `reason` says which rule, for the messages of every door. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';

  constructor(
    readonly host: string,
    readonly port: number,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`egress policy "public" refused ${host}:${port}: ${reason}`);
    this.name = 'EgressRefusedError';
  }
}

/** Parses "HOST[:PORT]", "[v6]:PORT", "a.b.c.d/n[:PORT]" or "v6/n"; throws a message naming the accepted forms. */
export function parseAllowRule(raw: string): AllowRule {
  const text = raw.trim();
  const bad = () =>
    new Error(`--egress-allow "${raw}" is not HOST[:PORT], IP[:PORT], [IPv6]:PORT or a CIDR network such as 10.0.0.0/8 or fd00::/8.`);
  let host = text;
  let port: number | undefined;
  const cidr = /^\[?([^\]/]+)\]?\/(\d{1,3})(?::(\d+))?$/.exec(text);
  if (cidr) {
    const [, address, prefix, portText] = cidr as unknown as [string, string, string, string | undefined];
    const family = isIP(address);
    if (!family || Number(prefix) > (family === 4 ? 32 : 128)) throw bad();
    const network = new BlockList();
    network.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    return { text, network, port: portText === undefined ? undefined : checkPort(portText, bad) };
  }
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = checkPort(bracketed[2], bad);
  } else if (isIP(text) !== 6) {
    const colon = text.lastIndexOf(':');
    if (colon >= 0) {
      host = text.slice(0, colon);
      port = checkPort(text.slice(colon + 1), bad);
    }
  }
  host = host.toLowerCase();
  if (!host || /[\s/@]/.test(host)) throw bad();
  const family = isIP(host);
  if (family) {
    const network = new BlockList();
    network.addAddress(host, family === 4 ? 'ipv4' : 'ipv6');
    return { text, network, port };
  }
  return { text, host, port };
}

function checkPort(text: string, bad: () => Error): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) throw bad();
  return port;
}

/** Decides which hosts, ports and addresses the server and its browser may connect to. */
export class EgressPolicy {
  readonly rules: AllowRule[];

  constructor(
    readonly name: EgressPolicyName,
    allow: readonly string[] = [],
  ) {
    this.rules = allow.map(parseAllowRule);
  }

  /** Whether an --egress-allow rule names this host (not its address) and port. */
  allowsName(host: string, port: number): boolean {
    const name = host.toLowerCase();
    return this.rules.some((rule) => rule.host === name && (rule.port === undefined || rule.port === port));
  }

  /** Why connecting to `address` (for `host`:`port`) is refused, or undefined when it is allowed. */
  refusal(host: string, port: number, address: string): string | undefined {
    if (this.name === 'all' || this.allowsName(host, port)) return undefined;
    const kind = classifyAddress(address);
    if (!kind) return undefined;
    const plain = isIP(address) === 6 ? (embeddedIPv4(address) ?? address) : address;
    const family = isIP(plain) === 4 ? 'ipv4' : 'ipv6';
    const opened = this.rules.some((rule) => rule.network?.check(plain, family) && (rule.port === undefined || rule.port === port));
    if (opened) return undefined;
    const where = unbracket(host) === address ? address : `${host} resolves to ${address}`;
    return `${where}, a ${kind} address`;
  }

  /**
   * Resolves `host` once and answers the addresses that may be connected to, in resolver order; the caller connects to
   * one of these very addresses, so no second lookup can swap in another. Throws EgressRefusedError when none may be.
   */
  async resolve(host: string, port: number): Promise<Array<{ address: string; family: 4 | 6 }>> {
    const name = unbracket(host);
    const family = isIP(name);
    const found = family ? [{ address: name, family }] : await lookup(name, { all: true });
    const results = found.map((entry) => ({ address: entry.address, family: entry.family as 4 | 6 }));
    const allowed = results.filter((entry) => this.refusal(name, port, entry.address) === undefined);
    if (allowed.length) return allowed;
    const first = results[0]!;
    throw new EgressRefusedError(name, port, first.address, this.refusal(name, port, first.address)!);
  }
}

/** The port a URL connects to. */
export function urlPort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}
