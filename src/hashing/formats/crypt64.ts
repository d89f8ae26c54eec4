/** The crypt(3) alphabet, shared by phpass, md5-crypt and sha-crypt (not bcrypt's order). */
export const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const isCrypt64 = (text: string): boolean => /^[./0-9A-Za-z]*$/.test(text);

/** Index of a crypt(3) symbol, -1 when it is none. */
export const crypt64Value = (symbol: string | undefined): number => (symbol ? ITOA64.indexOf(symbol) : -1);

/** `chars` symbols of a 24-bit value, least significant six bits first. */
function to64(value: number, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++, value >>>= 6) out += ITOA64[value & 0x3f];
  return out;
}

/**
 * Encodes `bytes` in groups of three byte indexes (most significant first; -1 is a zero byte),
 * four symbols per full group; the last group may be shorter, as crypt(3) schemes write them.
 */
export function encodeCrypt64(bytes: Uint8Array, groups: readonly (readonly number[])[], lastChars: number): string {
  let out = '';
  for (const [index, group] of groups.entries()) {
    const [b2, b1, b0] = group.map((at) => (at < 0 ? 0 : bytes[at]!));
    out += to64((b2! << 16) | (b1! << 8) | b0!, index === groups.length - 1 ? lastChars : 4);
  }
  return out;
}

/** phpass packs bytes in order, little-endian, three at a time. */
export function sequentialGroups(length: number): number[][] {
  const groups: number[][] = [];
  for (let at = 0; at < length; at += 3) {
    groups.push([at + 2 < length ? at + 2 : -1, at + 1 < length ? at + 1 : -1, at]);
  }
  return groups;
}
