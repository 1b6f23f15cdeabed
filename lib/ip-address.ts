/**
 * IP address rules shared by everything that must not be pointed at this machine or a private network
 * (webhook URLs on save and at delivery, OAuth loopback redirect URIs): one table of non-public ranges
 * per family, a parser for each family, and the host names that mean this machine.
 */

/** Host names of this machine as the URL parser spells them. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** "[::1]" → "::1"; anything else unchanged. */
export function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True for an IPv4 or IPv6 literal (brackets allowed), whatever its range. */
export function isIpLiteral(host: string): boolean {
  const h = unbracket(host);
  return parseIPv4(h) !== undefined || parseIPv6(h) !== undefined;
}

/** True for an IPv4 or IPv6 address that is publicly routable; false for anything else, including non-addresses. */
export function isPublicAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return isPublicIPv4(v4);
  const v6 = parseIPv6(address);
  if (v6 !== undefined) return isPublicIPv6(v6);
  return false;
}

/** 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return v4 >>> 24 === 127;
  const v6 = parseIPv6(address);
  return v6?.every((h, i) => h === (i === 7 ? 1 : 0)) ?? false;
}

// ---------------------------------------------------------------------------------------------
// IPv4

/** Ranges that are not publicly routable (RFC 6890 and friends), as [first address, prefix length]. */
const NON_PUBLIC_V4: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata services live here)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation (TEST-NET-1)'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation (TEST-NET-2)'],
  ['203.0.113.0', 24, 'documentation (TEST-NET-3)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
  ['255.255.255.255', 32, 'limited broadcast'],
];
const NON_PUBLIC_V4_PARSED = NON_PUBLIC_V4.map(([base, bits]) => [parseIPv4(base)!, bits] as const);

function isPublicIPv4(n: number): boolean {
  return !NON_PUBLIC_V4_PARSED.some(([base, bits]) => inIPv4Range(n, base, bits));
}

function inIPv4Range(n: number, base: number, bits: number): boolean {
  if (bits === 0) return true;
  return (n ^ base) >>> (32 - bits) === 0;
}

/** A dotted quad ("10.0.0.1") as an unsigned 32-bit number, or undefined. */
export function parseIPv4(text: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((n, o) => n * 256 + o, 0);
}

// ---------------------------------------------------------------------------------------------
// IPv6

/** Ranges that are not publicly routable or must not be dialled, as [first address, prefix length]. */
const NON_PUBLIC_V6: readonly (readonly [string, number, string])[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 32, 'Teredo (embeds an obfuscated IPv4 address)'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];
const NON_PUBLIC_V6_PARSED = NON_PUBLIC_V6.map(([base, bits]) => [parseIPv6(base)!, bits] as const);

/** Forms that carry an IPv4 address: that address decides. */
const IPV4_MAPPED = parseIPv6('::ffff:0:0')!; // ::ffff:a.b.c.d, /96
const NAT64 = parseIPv6('64:ff9b::')!; // 64:ff9b::a.b.c.d, /96 (RFC 6052)
const SIX_TO_FOUR = parseIPv6('2002::')!; // 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD, /16

function isPublicIPv6(h: readonly number[]): boolean {
  if (inIPv6Range(h, IPV4_MAPPED, 96) || inIPv6Range(h, NAT64, 96)) return isPublicIPv4(embeddedIPv4(h[6]!, h[7]!));
  if (inIPv6Range(h, SIX_TO_FOUR, 16)) return isPublicIPv4(embeddedIPv4(h[1]!, h[2]!));
  if (NON_PUBLIC_V6_PARSED.some(([base, bits]) => inIPv6Range(h, base, bits))) return false;
  // Everything routable on the internet is global unicast, 2000::/3; the rest is reserved.
  return (h[0]! & 0xe000) === 0x2000;
}

function embeddedIPv4(high: number, low: number): number {
  return high * 0x10000 + low;
}

function inIPv6Range(h: readonly number[], base: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((h[i]! ^ base[i]!) & mask) !== 0) return false;
  }
  return true;
}

/**
 * An IPv6 address (without brackets) as its 8 hextets, or undefined. Accepts "::" compression, a
 * dotted-quad tail ("::ffff:10.0.0.1") and a zone ("fe80::1%eth0", ignored).
 */
export function parseIPv6(text: string): number[] | undefined {
  let s = text.toLowerCase().replace(/%.*$/, '');
  // A dotted-quad tail becomes two hextets.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (tail) {
    const v4 = parseIPv4(tail[2]!);
    if (v4 === undefined) return undefined;
    s = `${tail[1]}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}
