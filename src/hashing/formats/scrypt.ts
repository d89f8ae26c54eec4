import { scrypt } from 'node:crypto';
import { LIMITS } from './limits';
import { bytesEqual, decodeBase64, decodeHex, parseBoundedInt, parseParams, utf8 } from './encoding';

export type ScryptScheme = 'passlib-scrypt' | 'kratos-scrypt' | 'django-scrypt' | 'werkzeug-scrypt';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export interface ScryptHash extends ScryptParams {
  family: 'scrypt';
  scheme: ScryptScheme;
  salt: Buffer;
  hash: Buffer;
}

/** Powers of two from 2 up, and within the memory and work bounds of LIMITS. */
export function boundedScryptParams(
  N: number | undefined,
  r: number | undefined,
  p: number | undefined,
): ScryptParams | undefined {
  if (N === undefined || r === undefined || p === undefined) return undefined;
  if (N < 2 || N > 2 ** 30 || (N & (N - 1)) !== 0) return undefined;
  if (128 * N * r > LIMITS.scryptMaxMemoryBytes || N * r * p > LIMITS.scryptMaxWork) return undefined;
  return { N, r, p };
}

const small = (text: string | undefined, max: number) => parseBoundedInt(text ?? '', 1, max);

function build(
  scheme: ScryptScheme,
  params: ScryptParams | undefined,
  salt: Buffer | undefined,
  hash: Buffer | undefined,
): ScryptHash | undefined {
  if (!params || !salt || !hash || salt.length < 1 || salt.length > 256) return undefined;
  if (hash.length < 16 || hash.length > 128) return undefined;
  return { family: 'scrypt', scheme, ...params, salt, hash };
}

/**
 * `$scrypt$ln=16,r=8,p=1$<salt>$<hash>`. passlib writes ln as log2(N) and unpadded base64; Ory
 * Kratos writes N itself under the same name (`ln=16384`) and padded base64. A value below 64 is
 * read as log2(N), a larger one as N.
 */
function parsePhc(text: string): ScryptHash | undefined {
  const [empty, name, params, saltText, hashText, ...rest] = text.split('$');
  if (empty !== '' || name !== 'scrypt' || rest.length > 0) return undefined;
  const values = parseParams(params ?? '', ['ln', 'r', 'p']);
  const ln = parseBoundedInt(values?.[0] ?? '', 1, 2 ** 30);
  if (!values || ln === undefined) return undefined;
  const kratos = ln >= 64;
  const N = kratos ? ln : 2 ** ln;
  const parsed = boundedScryptParams(N, small(values[1], 64), small(values[2], 64));
  const padding = kratos ? 'required' : 'none';
  const salt = decodeBase64(saltText ?? '', padding);
  return build(kratos ? 'kratos-scrypt' : 'passlib-scrypt', parsed, salt, decodeBase64(hashText ?? '', padding));
}

const textSalt = (text: string | undefined): Buffer | undefined =>
  text !== undefined && /^[\x21-\x23\x25-\x7e]{1,128}$/.test(text) ? utf8(text) : undefined;

/** Django: `scrypt$16384$<salt text>$8$1$<base64>`; Werkzeug: `scrypt:32768:8:1$<salt text>$<hex>`. */
function parseUnprefixed(text: string): ScryptHash | undefined {
  const parts = text.split('$');
  if (parts[0] === 'scrypt' && parts.length === 6) {
    const [, n, salt, r, p, hash] = parts;
    const params = boundedScryptParams(small(n, 2 ** 30), small(r, 64), small(p, 64));
    return build('django-scrypt', params, textSalt(salt), decodeBase64(hash ?? '', 'required'));
  }
  const werkzeug = /^scrypt:([0-9]+):([0-9]+):([0-9]+)$/.exec(parts[0] ?? '');
  if (!werkzeug || parts.length !== 3) return undefined;
  const params = boundedScryptParams(small(werkzeug[1], 2 ** 30), small(werkzeug[2], 64), small(werkzeug[3], 64));
  return build('werkzeug-scrypt', params, textSalt(parts[1]), decodeHex(parts[2] ?? ''));
}

export const parseScrypt = (text: string): ScryptHash | undefined =>
  text.startsWith('$scrypt$') ? parsePhc(text) : parseUnprefixed(text);

/** node:crypto's scrypt runs on the thread pool; maxmem is what OpenSSL needs for these N, r, p. */
export function deriveScrypt(password: Buffer, salt: Buffer, length: number, params: ScryptParams): Promise<Buffer> {
  const maxmem = 128 * params.r * (params.N + params.p + 2) + 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, { ...params, maxmem }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function verifyScrypt(parsed: ScryptHash, password: Buffer): Promise<boolean> {
  return bytesEqual(await deriveScrypt(password, parsed.salt, parsed.hash.length, parsed), parsed.hash);
}
