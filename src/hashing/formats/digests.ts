import { createHash } from 'node:crypto';
import { bytesEqual, decodeBase64, decodeHex, utf8 } from './encoding';

export type DigestAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';
export type DigestScheme = 'hex-digest' | 'kratos-digest' | 'django-digest' | 'ldap-digest';

/** The digest input: literal bytes and the place(s) where the password goes. */
type InputPart = Buffer | 'password';

export interface DigestHash {
  family: 'digest';
  scheme: DigestScheme;
  algorithm: DigestAlgorithm;
  salted: boolean;
  input: InputPart[];
  hash: Buffer;
}

const DIGEST_BYTES: Record<DigestAlgorithm, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 };
const HEX_LENGTHS = new Map<number, DigestAlgorithm>([[32, 'md5'], [40, 'sha1'], [64, 'sha256'], [128, 'sha512']]);
const MAX_SALT_BYTES = 256;

function digestHash(scheme: DigestScheme, algorithm: DigestAlgorithm, input: InputPart[], hash: Buffer | undefined) {
  if (!hash || hash.length !== DIGEST_BYTES[algorithm]) return undefined;
  const salted = input.some((part) => part !== 'password');
  return { family: 'digest', scheme, algorithm, salted, input, hash } satisfies DigestHash;
}

/** A bare hex digest of the password (Clerk's md5/sha256, passlib's hex_*, old WordPress MD5). */
function parseHex(text: string): DigestHash | undefined {
  const algorithm = HEX_LENGTHS.get(text.length);
  return algorithm && digestHash('hex-digest', algorithm, ['password'], decodeHex(text));
}

/**
 * Ory Kratos: `$md5$<base64>` unsalted, or `$md5|sha1|sha256|sha512$pf=<base64 template>$<base64
 * salt>$<base64 hash>`, where the template places `{SALT}` and `{PASSWORD}` (e.g. `{SALT}{PASSWORD}`).
 */
function parseKratos(text: string): DigestHash | undefined {
  const [empty, name, ...fields] = text.split('$');
  const algorithm = name === 'md5' || name === 'sha1' || name === 'sha256' || name === 'sha512' ? name : undefined;
  if (empty !== '' || !algorithm) return undefined;
  if (fields.length === 1 && algorithm === 'md5') {
    return digestHash('kratos-digest', 'md5', ['password'], decodeBase64(fields[0]!, 'required'));
  }
  const [format, saltText, hashText] = fields;
  if (fields.length !== 3 || !format?.startsWith('pf=')) return undefined;
  const template = decodeBase64(format.slice(3), 'required')?.toString('utf8');
  const salt = decodeBase64(saltText ?? '', 'required');
  if (!template || template.length > 256 || !template.includes('{PASSWORD}')) return undefined;
  if (!salt || salt.length > MAX_SALT_BYTES) return undefined;
  const input = template
    .split(/(\{SALT\}|\{PASSWORD\})/)
    .filter((piece) => piece !== '')
    .map((piece): InputPart => (piece === '{PASSWORD}' ? 'password' : piece === '{SALT}' ? salt : utf8(piece)));
  return digestHash('kratos-digest', algorithm, input, decodeBase64(hashText ?? '', 'required'));
}

/**
 * Django's legacy hashers: `md5$<salt>$<hex>` and `sha1$<salt>$<hex>` are digest(salt ‖ password);
 * an empty salt (`sha1$$<hex>`) is the unsalted form.
 */
function parseDjango(text: string): DigestHash | undefined {
  const [name, salt, hex, ...rest] = text.split('$');
  if ((name !== 'md5' && name !== 'sha1') || salt === undefined || hex === undefined || rest.length > 0) return undefined;
  if (!/^[\x21-\x23\x25-\x7e]{0,128}$/.test(salt)) return undefined;
  const input: InputPart[] = salt === '' ? ['password'] : [utf8(salt), 'password'];
  return digestHash('django-digest', name, input, decodeHex(hex));
}

const LDAP = new Map<string, [DigestAlgorithm, boolean]>([
  ['{MD5}', ['md5', false]], ['{SMD5}', ['md5', true]],
  ['{SHA}', ['sha1', false]], ['{SSHA}', ['sha1', true]],
  ['{SHA256}', ['sha256', false]], ['{SSHA256}', ['sha256', true]],
  ['{SHA512}', ['sha512', false]], ['{SSHA512}', ['sha512', true]],
]);

/** RFC 2307 style: `{SSHA}base64(digest(password ‖ salt) ‖ salt)`; unsalted ones hold the digest alone. */
function parseLdap(text: string): DigestHash | undefined {
  const scheme = /^\{[A-Z0-9]+\}/.exec(text)?.[0];
  const known = scheme === undefined ? undefined : LDAP.get(scheme);
  const bytes = scheme === undefined ? undefined : decodeBase64(text.slice(scheme.length), 'required');
  if (!known || !bytes) return undefined;
  const [algorithm, salted] = known;
  const size = DIGEST_BYTES[algorithm];
  if (!salted) return digestHash('ldap-digest', algorithm, ['password'], bytes);
  if (bytes.length <= size || bytes.length > size + MAX_SALT_BYTES) return undefined;
  return digestHash('ldap-digest', algorithm, ['password', bytes.subarray(size)], bytes.subarray(0, size));
}

export function parseDigest(text: string): DigestHash | undefined {
  if (text.startsWith('{')) return parseLdap(text);
  if (text.startsWith('$')) return parseKratos(text);
  return text.includes('$') ? parseDjango(text) : parseHex(text);
}

/** One digest call over a short input: microseconds, so it runs inline. */
export async function verifyDigest(parsed: DigestHash, password: Buffer): Promise<boolean> {
  const hasher = createHash(parsed.algorithm);
  for (const part of parsed.input) hasher.update(part === 'password' ? password : part);
  return bytesEqual(hasher.digest(), parsed.hash);
}
