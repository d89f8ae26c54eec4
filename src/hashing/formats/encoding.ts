import { timingSafeEqual } from 'node:crypto';

const STANDARD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

type Padding = 'required' | 'optional' | 'none';

/**
 * Strict base64: only the alphabet, padding as asked, and no stray bits in the last symbol
 * (re-encoding would give the same text), so one hash has exactly one accepted spelling.
 */
export function decodeBase64(text: string, padding: Padding = 'optional'): Buffer | undefined {
  const body = text.replace(/=+$/, '');
  const padded = body.length !== text.length;
  if (padding === 'none' && padded) return undefined;
  if (padding === 'required' && text.length % 4 !== 0) return undefined;
  if (padded && text.length - body.length !== (4 - (body.length % 4)) % 4) return undefined;
  if (body.length % 4 === 1 || !/^[A-Za-z0-9+/]*$/.test(body)) return undefined;
  if (!noStrayBits(body, STANDARD_ALPHABET)) return undefined;
  return Buffer.from(body, 'base64');
}

/** The bits of the last symbol past the last whole byte are zero (checked without re-encoding). */
function noStrayBits(text: string, alphabet: string): boolean {
  const strayBits = (text.length * 6) % 8;
  return strayBits === 0 || (alphabet.indexOf(text[text.length - 1]!) & ((1 << strayBits) - 1)) === 0;
}

/** passlib's "adapted base64": `.` instead of `+`, never padded. */
export function decodeAdaptedBase64(text: string): Buffer | undefined {
  if (text.includes('+')) return undefined;
  return decodeBase64(text.replaceAll('.', '+'), 'none');
}

/** Lower- or upper-case hex of an exact byte length (any even length when omitted). */
export function decodeHex(text: string, byteLength?: number): Buffer | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(text)) return undefined;
  if (byteLength !== undefined && text.length !== byteLength * 2) return undefined;
  return Buffer.from(text, 'hex');
}

/** A plain decimal without sign or leading zeros, within [min, max]. */
export function parseBoundedInt(text: string, min: number, max: number): number | undefined {
  if (!/^(?:0|[1-9][0-9]{0,9})$/.test(text)) return undefined;
  const value = Number(text);
  return value >= min && value <= max ? value : undefined;
}

/** Reads `a=1,b=2` with exactly the given keys in the given order. */
export function parseParams(text: string, keys: readonly string[]): string[] | undefined {
  const pairs = text.split(',');
  if (pairs.length !== keys.length) return undefined;
  const values: string[] = [];
  for (const [index, pair] of pairs.entries()) {
    const [key, value, extra] = pair.split('=');
    if (key !== keys[index] || value === undefined || extra !== undefined) return undefined;
    values.push(value);
  }
  return values;
}

export const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Constant-time for equal lengths; lengths are fixed by the parsed format, so they are not secret. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
