import { createHash, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Hashing both sides first makes the comparison constant-time whatever the lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** One-time and recovery codes are case-insensitive. */
export const normalizeCode = (code: string): string => code.toUpperCase();

/** Case-insensitive, constant-time. */
export const codeMatches = (given: string, issued: string): boolean =>
  constantTimeEqual(normalizeCode(given), normalizeCode(issued));
