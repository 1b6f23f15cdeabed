import { isIPv4, isIPv6 } from 'node:net';

/**
 * What a per-address limit counts: one client. An IPv4 address (or one mapped into IPv6) is itself;
 * an IPv6 address is its /64, the prefix one subscriber or host is given (RFC 6177, RFC 7934), so
 * that the 2^64 addresses a client can take from it are one key, not unlimited attempts. Anything
 * else (a Unix socket: no address) counts as it is.
 */
export function addressKey(ip: string): string {
  const bare = ip.split('%')[0]!.toLowerCase(); // (a zone id names the link, not the client)
  if (isIPv4(bare) || !isIPv6(bare)) return bare;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 6).every((g, i) => g === (i === 5 ? 0xffff : 0)))
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(ip: string): number[] {
  const parse = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((g) => {
          if (!g.includes('.')) return [parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number) as [number, number, number, number];
          return [(a << 8) | b, (c << 8) | d];
        });
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const h = parse(head);
  if (tail === undefined) return h;
  const t = parse(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}
