import { createHmac } from 'node:crypto';
import { bytesEqual, decodeBase64, decodeHex } from './encoding';

export type HmacAlgorithm = 'md4' | 'md5' | 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512';

export interface HmacHash {
  family: 'hmac';
  scheme: 'kratos-hmac';
  algorithm: HmacAlgorithm;
  key: Buffer;
  mac: Buffer;
}

const MAC_BYTES = new Map<string, [HmacAlgorithm, number]>([
  ['md4', ['md4', 16]], ['md5', ['md5', 16]], ['sha1', ['sha1', 20]], ['sha224', ['sha224', 28]],
  ['sha256', ['sha256', 32]], ['sha384', ['sha384', 48]], ['sha512', ['sha512', 64]],
]);

/**
 * Ory Kratos: `$hmac-sha256$<base64 of the lower-case hex MAC>$<base64 key>`, the MAC being
 * HMAC(key, password).
 */
export function parseHmac(text: string): HmacHash | undefined {
  const [empty, name, macText, keyText, ...rest] = text.split('$');
  const known = name?.startsWith('hmac-') ? MAC_BYTES.get(name.slice(5)) : undefined;
  if (empty !== '' || !known || macText === undefined || keyText === undefined || rest.length > 0) return undefined;
  const [algorithm, size] = known;
  const hex = decodeBase64(macText, 'required')?.toString('latin1');
  const mac = hex !== undefined && /^[0-9a-f]*$/.test(hex) ? decodeHex(hex, size) : undefined;
  const key = decodeBase64(keyText, 'required');
  if (!mac || !key || key.length > 256) return undefined;
  return { family: 'hmac', scheme: 'kratos-hmac', algorithm, key, mac };
}

export async function verifyHmac(parsed: HmacHash, password: Buffer): Promise<boolean> {
  return bytesEqual(createHmac(parsed.algorithm, parsed.key).update(password).digest(), parsed.mac);
}
