import { createCipheriv } from 'node:crypto';
import { bytesEqual, decodeBase64, parseBoundedInt, parseParams } from './encoding';
import { boundedScryptParams, deriveScrypt, type ScryptParams } from './scrypt';

export interface FirebaseScryptHash {
  family: 'firebase-scrypt';
  scheme: 'firebase-scrypt';
  /** Firebase's mem_cost is log2(N); rounds is scrypt's r; p is always 1. */
  memCost: number;
  rounds: number;
  params: ScryptParams;
  salt: Buffer;
  saltSeparator: Buffer;
  signerKey: Buffer;
  hash: Buffer;
}

/**
 * Ory Kratos's spelling, which carries the project's hash parameters in every line:
 * `$firescrypt$ln=<mem_cost>,r=<rounds>,p=1$<salt>$<hash>$<salt separator>$<signer key>`,
 * each binary field in padded standard base64 as the Firebase console and CLI print them.
 */
export function parseFirebaseScrypt(text: string): FirebaseScryptHash | undefined {
  const [empty, name, params, salt, hash, separator, signer, ...rest] = text.split('$');
  if (empty !== '' || name !== 'firescrypt' || rest.length > 0) return undefined;
  const values = parseParams(params ?? '', ['ln', 'r', 'p']);
  if (!values || values[2] !== '1') return undefined;
  const memCost = parseBoundedInt(values[0]!, 1, 30);
  const rounds = parseBoundedInt(values[1]!, 1, 64);
  const scrypt = boundedScryptParams(memCost === undefined ? undefined : 2 ** memCost, rounds, 1);
  const decoded = [salt, hash, separator, signer].map((field) => decodeBase64(field ?? '', 'required'));
  const [saltBytes, hashBytes, separatorBytes, signerBytes] = decoded;
  if (!scrypt || !saltBytes || !hashBytes || !separatorBytes || !signerBytes) return undefined;
  if (saltBytes.length < 1 || saltBytes.length > 64 || separatorBytes.length > 64) return undefined;
  // The hash is the signer key encrypted with AES-CTR, so both have the same length.
  if (signerBytes.length < 16 || signerBytes.length > 256 || hashBytes.length !== signerBytes.length) return undefined;
  return {
    family: 'firebase-scrypt',
    scheme: 'firebase-scrypt',
    memCost: memCost!,
    rounds: rounds!,
    params: scrypt,
    salt: saltBytes,
    saltSeparator: separatorBytes,
    signerKey: signerBytes,
    hash: hashBytes,
  };
}

/**
 * Firebase's variant: scrypt(password, salt ‖ separator, N=2^mem_cost, r=rounds, p=1) gives a
 * 32-byte key; the stored hash is the project's signer key encrypted under it with AES-256-CTR
 * and a zero IV.
 */
export async function verifyFirebaseScrypt(parsed: FirebaseScryptHash, password: Buffer): Promise<boolean> {
  const key = await deriveScrypt(password, Buffer.concat([parsed.salt, parsed.saltSeparator]), 32, parsed.params);
  const cipher = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const expected = Buffer.concat([cipher.update(parsed.signerKey), cipher.final()]);
  return bytesEqual(expected, parsed.hash);
}
