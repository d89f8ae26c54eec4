import { timingSafeEqual } from 'node:crypto';
import { generateId } from './random';

/**
 * End-user API keys (API.md §18): `gh_` + the key's id (24 characters of the id alphabet) + `_` +
 * 32 random bytes in base64url (43 characters). Only the SHA-256 of the random part is stored; the
 * key carries its id, so a check is one lookup by id and one constant-time comparison.
 */
const KEY_SHAPE = /^gh_([abcdefghijkmnpqrstuvwxyz23456789]{24})_([A-Za-z0-9_-]{43})$/;
/** A key's id: what parseApiKey accepts, so an imported key stays verifiable. */
export const isApiKeyId = (id: string): boolean => /^[abcdefghijkmnpqrstuvwxyz23456789]{24}$/.test(id);
/** The last base64url character of 32 bytes carries 2 padding bits: only these end a canonical encoding. */
const CANONICAL_LAST = /[AEIMQUYcgkosw048]$/;

export const API_KEY_START_LENGTH = 12;
/** The key's first 12 characters (API.md §18): `gh_` and the start of its id, so an imported key gets it from its id. */
export const apiKeyStart = (id: string): string => `gh_${id}`.slice(0, API_KEY_START_LENGTH);

/** SHA-256 of the random part, hex. */
const secretHash = (secret: string): string => (Bun.SHA256.hash(secret, 'hex') as string);

export function generateApiKey(): { id: string; key: string; secretHash: string; start: string } {
  const id = generateId();
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
  const key = `gh_${id}_${secret}`;
  return { id, key, secretHash: secretHash(secret), start: apiKeyStart(id) };
}

/** The id and secret of a well-formed key; undefined for anything else, decided without storage. */
export function parseApiKey(key: string): { id: string; secret: string } | undefined {
  const match = KEY_SHAPE.exec(key);
  if (match === null || !CANONICAL_LAST.test(match[2]!)) return undefined;
  return { id: match[1]!, secret: match[2]! };
}

/** The digests' 32 bytes, compared whole by timingSafeEqual (a stored hash is 64 hex digits, isSecretHash). */
export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Bun.SHA256.hash(secret) as Uint8Array;
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored);
}

/** Whether a stored hash has the shape secretMatches expects (import checks it). */
export const isSecretHash = (value: string): boolean => /^[0-9a-f]{64}$/.test(value);
