import { createHash, timingSafeEqual } from 'node:crypto';

const ID_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Both alphabets have 32 symbols, so `byte & 31` picks uniformly. */
function randomString(alphabet: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}

/** 24 characters, 120 bits. */
export const generateId = (): string => randomString(ID_ALPHABET, 24);

/** 8-character one-time code for email verification, email update and password reset. */
export const generateOneTimeCode = (): string => randomString(CODE_ALPHABET, 8);

export const generateRecoveryCode = (): string => randomString(CODE_ALPHABET, 16);

/** The API credential printed by `gatehouse generate-secret`: 200 bits. */
export const generateSecret = (): string => randomString(ID_ALPHABET, 40);

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** Hashing both sides first makes the comparison constant-time whatever the lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** One-time and recovery codes are case-insensitive. */
export const normalizeCode = (code: string): string => code.toUpperCase();
