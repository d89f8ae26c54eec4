import { pbkdf2 } from 'node:crypto';
import { promisify } from 'node:util';
import { LIMITS } from './limits';
import {
  bytesEqual,
  decodeAdaptedBase64,
  decodeBase64,
  decodeHex,
  parseBoundedInt,
  parseParams,
  utf8,
} from './encoding';

const pbkdf2Async = promisify(pbkdf2);

export type Pbkdf2Digest = 'sha1' | 'sha256' | 'sha512';
export type Pbkdf2Scheme = 'passlib-pbkdf2' | 'kratos-pbkdf2' | 'django-pbkdf2' | 'pbkdf2-hex' | 'werkzeug-pbkdf2';

export interface Pbkdf2Hash {
  family: 'pbkdf2';
  scheme: Pbkdf2Scheme;
  digest: Pbkdf2Digest;
  iterations: number;
  salt: Buffer;
  hash: Buffer;
}

const DIGEST_BYTES: Record<Pbkdf2Digest, number> = { sha1: 20, sha256: 32, sha512: 64 };
const digestOf = (name: string | undefined): Pbkdf2Digest | undefined =>
  name === 'sha1' || name === 'sha256' || name === 'sha512' ? name : undefined;

/** Salts that the source system used as text (Django, Werkzeug): no `$`, printable ASCII. */
const textSalt = (text: string | undefined): Buffer | undefined =>
  text !== undefined && /^[\x21-\x23\x25-\x7e]{1,128}$/.test(text) ? utf8(text) : undefined;

function build(
  scheme: Pbkdf2Scheme,
  digest: Pbkdf2Digest | undefined,
  iterationsText: string | undefined,
  salt: Buffer | undefined,
  hash: Buffer | undefined,
): Pbkdf2Hash | undefined {
  if (!digest || !salt || !hash || salt.length < 1 || salt.length > 256) return undefined;
  if (hash.length < 16 || hash.length > 128) return undefined;
  const iterations = parseBoundedInt(iterationsText ?? '', 1, LIMITS.pbkdf2MaxWork);
  if (iterations === undefined) return undefined;
  if (iterations * Math.ceil(hash.length / DIGEST_BYTES[digest]) > LIMITS.pbkdf2MaxWork) return undefined;
  return { family: 'pbkdf2', scheme, digest, iterations, salt, hash };
}

const PASSLIB_NAMES = new Map<string, Pbkdf2Digest>([
  ['pbkdf2', 'sha1'],
  ['pbkdf2-sha256', 'sha256'],
  ['pbkdf2-sha512', 'sha512'],
]);

/** passlib: `$pbkdf2$…` is SHA-1; `$pbkdf2-sha256$29000$<ab64 salt>$<ab64 hash>`. */
function parsePasslib(parts: string[]): Pbkdf2Hash | undefined {
  const [, name, rounds, salt, hash] = parts;
  const digest = PASSLIB_NAMES.get(name ?? '');
  if (parts.length !== 5 || !/^[0-9]+$/.test(rounds ?? '')) return undefined;
  const saltBytes = decodeAdaptedBase64(salt ?? '');
  const parsed = build('passlib-pbkdf2', digest, rounds, saltBytes, decodeAdaptedBase64(hash ?? ''));
  return parsed && parsed.hash.length === DIGEST_BYTES[parsed.digest] ? parsed : undefined;
}

/** Ory Kratos: `$pbkdf2-sha256$i=100000,l=32$<salt>$<hash>`, unpadded standard base64. */
function parseKratos(parts: string[]): Pbkdf2Hash | undefined {
  const [, name, params, salt, hash] = parts;
  const values = parseParams(params ?? '', ['i', 'l']);
  if (parts.length !== 5 || !values || !name?.startsWith('pbkdf2-')) return undefined;
  const saltBytes = decodeBase64(salt ?? '', 'none');
  const parsed = build('kratos-pbkdf2', digestOf(name.slice(7)), values[0], saltBytes, decodeBase64(hash ?? '', 'none'));
  return parsed && String(parsed.hash.length) === values[1] ? parsed : undefined;
}

/** Django derives digest-sized keys; Clerk's hex pbkdf2_sha1 defaults to 32 bytes. */
const djangoKeyLength = (parsed: Pbkdf2Hash, field: string): boolean =>
  parsed.hash.length === DIGEST_BYTES[parsed.digest] ||
  (parsed.digest === 'sha1' && parsed.hash.length === 32 && !field.endsWith('='));

/** A Django-style hash field: padded base64 (Django) or hex (Clerk's pbkdf2_sha1/pbkdf2_sha512). */
const base64OrHex = (text: string | undefined): Buffer | undefined =>
  text === undefined ? undefined : /^[0-9a-fA-F]+$/.test(text) ? decodeHex(text) : decodeBase64(text, 'required');

/**
 * Django: `pbkdf2_sha256$<iterations>$<salt text>$<base64>`; `pbkdf2_sha512_hex$…` has hex salt and
 * hash; Werkzeug: `pbkdf2:sha256:600000$<salt text>$<hex>`.
 */
function parseUnprefixed(text: string): Pbkdf2Hash | undefined {
  const [method, a, b, c, ...rest] = text.split('$');
  if (rest.length > 0 || a === undefined || b === undefined) return undefined;
  const werkzeug = /^pbkdf2:(sha1|sha256|sha512):([0-9]+)$/.exec(method ?? '');
  if (werkzeug) {
    const digest = digestOf(werkzeug[1]);
    if (c !== undefined || !digest) return undefined;
    return build('werkzeug-pbkdf2', digest, werkzeug[2], textSalt(a), decodeHex(b, DIGEST_BYTES[digest]));
  }
  if (c === undefined) return undefined;
  if (method === 'pbkdf2_sha512_hex') return build('pbkdf2-hex', 'sha512', a, decodeHex(b), decodeHex(c, 64));
  if (!method?.startsWith('pbkdf2_')) return undefined;
  const parsed = build('django-pbkdf2', digestOf(method.slice(7)), a, textSalt(b), base64OrHex(c));
  return parsed && djangoKeyLength(parsed, c) ? parsed : undefined;
}

export function parsePbkdf2(text: string): Pbkdf2Hash | undefined {
  if (!text.startsWith('$pbkdf2')) return parseUnprefixed(text);
  const parts = text.split('$');
  return parts[2]?.startsWith('i=') ? parseKratos(parts) : parsePasslib(parts);
}

/** node:crypto's pbkdf2 runs on the thread pool, off the event loop. */
export async function verifyPbkdf2(parsed: Pbkdf2Hash, password: Buffer): Promise<boolean> {
  const derived = await pbkdf2Async(password, parsed.salt, parsed.iterations, parsed.hash.length, parsed.digest);
  return bytesEqual(derived, parsed.hash);
}
