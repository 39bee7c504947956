import { BlockList, isIP } from 'node:net';

/** Why an address is not public; `undefined` from classifyAddress means a public unicast address. */
export type AddressKind =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'carrier-grade NAT'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'not an IP address';

const V4_RANGES: Array<[string, number, AddressKind]> = [
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: Array<[string, number, AddressKind]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
  ['100::', 64, 'reserved'],
  ['64:ff9b:1::', 48, 'private'],
];

/** One BlockList per kind, so a hit says which rule matched; broadcast comes first, as 240/4 (reserved) contains it. */
const LISTS: Array<{ kind: AddressKind; list: BlockList }> = [];
for (const [network, prefix, kind] of [...V4_RANGES, ...V6_RANGES]) {
  let entry = LISTS.find((item) => item.kind === kind);
  if (!entry) LISTS.push((entry = { kind, list: new BlockList() }));
  entry.list.addSubnet(network, prefix, network.includes(':') ? 'ipv6' : 'ipv4');
}

/**
 * The kind of non-public address `address` is, or undefined for a public one. IPv4 addresses embedded in IPv6
 * (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged as the IPv4 they carry.
 */
export function classifyAddress(address: string): AddressKind | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIPv4(address);
    if (embedded) return classifyAddress(embedded);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { kind, list } of LISTS) if (list.check(address, type)) return kind;
  return undefined;
}

/** The IPv4 address an IPv6 address stands for, when it is one of the forms that carry one. */
export function embeddedIPv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  // IPv4-compatible (deprecated), but not :: and ::1 themselves.
  if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad allowed), or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((word) => parseInt(word, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  return [...left, ...new Array<number>(Math.max(0, missing)).fill(0), ...right];
}

/** "[::1]" -> "::1"; URL hosts bracket IPv6 literals. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
