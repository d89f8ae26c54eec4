/** The eight 16-bit groups of an IPv6 address (brackets and zone allowed), or undefined. */
function parseIpv6(input: string): number[] | undefined {
  const text = input.replace(/^\[(.*)\]$/s, '$1').replace(/%.*$/s, '');
  const halves = text.split('::');
  if (!text.includes(':') || halves.length > 2) return undefined;
  const parts = halves.map((half, i) => parseGroups(half, i === halves.length - 1));
  const [left, right = []] = parts;
  if (!left || parts.includes(undefined)) return undefined;
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...left, ...Array<number>(missing).fill(0), ...right];
}

/** Colon-separated hex groups; only the address's final part may end in a dotted IPv4 address. */
function parseGroups(part: string, mayEndInIpv4: boolean): number[] | undefined {
  if (part === '') return [];
  const pieces = part.split(':');
  const v4 = mayEndInIpv4 && part.includes('.') ? parseIpv4(pieces.pop() ?? '') : [];
  if (!v4 || !pieces.every((p) => /^[0-9a-f]{1,4}$/i.test(p))) return undefined;
  return [...pieces.map((p) => parseInt(p, 16)), ...v4];
}

function parseIpv4(text: string): number[] | undefined {
  const octets = text.split('.').map((s) => (/^(0|[1-9]\d{0,2})$/.test(s) ? Number(s) : 256));
  const [a = 256, b = 256, c = 256, d = 256] = octets;
  if (octets.length !== 4 || octets.some((n) => n > 255)) return undefined;
  return [(a << 8) | b, (c << 8) | d];
}

/** The first six groups of the /96 prefixes whose last 32 bits are a whole IPv4 address. */
const IPV4_EMBEDDING_PREFIXES = [
  [0, 0, 0, 0, 0, 0xffff], // IPv4-mapped, ::ffff:0:0/96
  [0x64, 0xff9b, 0, 0, 0, 0], // NAT64 well-known prefix, 64:ff9b::/96 (RFC 6052)
];

/**
 * IPv6 clients share one key per /64, since a single host usually controls a whole /64. An address
 * that embeds an IPv4 address is one IPv4 client: its /64 would lump every such client together.
 */
export function addressKey(clientIp: string): string {
  const groups = parseIpv6(clientIp);
  if (!groups) return clientIp;
  if (IPV4_EMBEDDING_PREFIXES.some((prefix) => prefix.every((g, i) => groups[i] === g))) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
