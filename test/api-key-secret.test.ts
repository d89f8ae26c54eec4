// The end-user API key's secret (src/security/api-key-secret.ts, API.md §18): its shape, what parses,
// and the comparison against a stored SHA-256, with FIPS 180-2's "abc" vector as a stored hash.
import { describe, expect, test } from 'bun:test';
import { apiKeyStart, generateApiKey, isSecretHash, parseApiKey, secretMatches } from '../src/security/api-key-secret';

const ABC_SHA256 = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

describe('API key secrets', () => {
  test('a generated key parses back to its id and a secret whose SHA-256 is the stored hash', () => {
    const { id, key, secretHash, start } = generateApiKey();
    expect(key).toMatch(/^gh_[abcdefghijkmnpqrstuvwxyz23456789]{24}_[A-Za-z0-9_-]{43}$/);
    expect(start).toBe(key.slice(0, 12));
    expect(start).toBe(apiKeyStart(id));
    expect(isSecretHash(secretHash)).toBe(true);
    const parsed = parseApiKey(key)!;
    expect(parsed.id).toBe(id);
    expect(secretMatches(parsed.secret, secretHash)).toBe(true);
  });

  test('the comparison takes the digest of the secret, and only that digest', () => {
    expect(secretMatches('abc', ABC_SHA256)).toBe(true);
    expect(secretMatches('abd', ABC_SHA256)).toBe(false);
    expect(secretMatches('abc', `${ABC_SHA256.slice(0, -1)}c`)).toBe(false);
    // A stored value that is not 64 hex digits never matches (import refuses it; isSecretHash).
    expect(secretMatches('abc', ABC_SHA256.slice(0, 62))).toBe(false);
    expect(secretMatches('abc', `${ABC_SHA256.slice(0, 62)}zz`)).toBe(false);
    expect(secretMatches('abc', '')).toBe(false);
  });

  test('anything but a canonical key is no key', () => {
    const { key } = generateApiKey();
    const last = key.at(-1)!;
    // 32 bytes leave 2 spare bits in the last base64url character: a key that sets them is not one we issued.
    const nonCanonical = key.slice(0, -1) + ('AEIMQUYcgkosw048'.includes(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : last);
    for (const bad of [key.replace('gh_', 'gx_'), `${key}A`, key.slice(0, -1), key.replace(/_/g, '-'), key.toUpperCase(), ` ${key}`, nonCanonical, '']) {
      expect({ bad, parsed: parseApiKey(bad) }).toEqual({ bad, parsed: undefined });
    }
  });
});
