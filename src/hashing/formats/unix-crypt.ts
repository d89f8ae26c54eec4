import { createHash } from 'node:crypto';
import { LIMITS } from './limits';
import { bytesEqual, parseBoundedInt, utf8 } from './encoding';
import { crypt64Value, encodeCrypt64, isCrypt64 } from './crypt64';
import { runInSlices } from './sliced';

export type CryptAlgorithm = 'md5' | 'sha256' | 'sha512';

export interface UnixCryptHash {
  family: 'unix-crypt';
  scheme: 'md5-crypt' | 'sha-crypt';
  algorithm: CryptAlgorithm;
  rounds: number;
  salt: string;
  hash: string;
}

/** The crypt(3) ids, and Ory Kratos's names for the same strings. */
const IDS = new Map<string, CryptAlgorithm>([
  ['1', 'md5'], ['5', 'sha256'], ['6', 'sha512'],
  ['md5-crypt', 'md5'], ['sha256-crypt', 'sha256'], ['sha512-crypt', 'sha512'],
]);
const HASH_CHARS: Record<CryptAlgorithm, number> = { md5: 22, sha256: 43, sha512: 86 };
/** Bits held by the last symbol, which must leave the unused high bits zero. */
const LAST_SYMBOL_LIMIT: Record<CryptAlgorithm, number> = { md5: 4, sha256: 16, sha512: 4 };

/** Byte order of the output, from the md5-crypt and sha-crypt specifications. */
const GROUPS: Record<CryptAlgorithm, number[][]> = {
  md5: [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5], [-1, -1, 11]],
  sha256: [
    [0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14], [15, 25, 5],
    [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29], [-1, 31, 30],
  ],
  sha512: [
    [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48],
    [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10], [53, 11, 32], [12, 33, 54], [34, 55, 13],
    [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41],
    [-1, -1, 63],
  ],
};
const LAST_CHARS: Record<CryptAlgorithm, number> = { md5: 2, sha256: 3, sha512: 2 };

/** `$1$<salt>$<hash>`, `$5$[rounds=N$]<salt>$<hash>`, `$6$…`, or Kratos's `$md5-crypt$…` spellings. */
export function parseUnixCrypt(text: string): UnixCryptHash | undefined {
  const parts = text.split('$');
  const algorithm = IDS.get(parts[1] ?? '');
  if (parts[0] !== '' || !algorithm) return undefined;
  let rest = parts.slice(2);
  let rounds = algorithm === 'md5' ? 1000 : 5000;
  if (algorithm !== 'md5' && rest[0]?.startsWith('rounds=')) {
    const given = parseBoundedInt(rest[0].slice(7), 1000, LIMITS.loopMaxSteps);
    if (given === undefined) return undefined;
    rounds = given;
    rest = rest.slice(1);
  }
  const [salt, hash, ...extra] = rest;
  if (salt === undefined || hash === undefined || extra.length > 0) return undefined;
  if (salt.length > (algorithm === 'md5' ? 8 : 16) || !isCrypt64(salt) || !isCrypt64(hash)) return undefined;
  if (hash.length !== HASH_CHARS[algorithm]) return undefined;
  if (crypt64Value(hash.at(-1)) >= LAST_SYMBOL_LIMIT[algorithm]) return undefined;
  const scheme = algorithm === 'md5' ? 'md5-crypt' : 'sha-crypt';
  return { family: 'unix-crypt', scheme, algorithm, rounds, salt, hash };
}

const digest = (algorithm: CryptAlgorithm, ...parts: Uint8Array[]): Buffer => {
  const hasher = createHash(algorithm);
  for (const part of parts) hasher.update(part);
  return hasher.digest();
};

/** `length` bytes made of `block` repeated (sha-crypt's P and S sequences, md5-crypt's prefix). */
function repeatTo(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; at += block.length) block.copy(out, at, 0, Math.min(block.length, length - at));
  return out;
}

/** The part before the rounds loop; md5-crypt and sha-crypt differ only in small ways here. */
function initialState(parsed: UnixCryptHash, password: Buffer, salt: Buffer) {
  const { algorithm } = parsed;
  const alternate = digest(algorithm, password, salt, password);
  const hasher = createHash(algorithm).update(password);
  if (algorithm === 'md5') hasher.update('$1$');
  hasher.update(salt).update(repeatTo(alternate, password.length));
  for (let length = password.length; length > 0; length >>= 1) {
    if (algorithm === 'md5') hasher.update(length & 1 ? Buffer.alloc(1) : password.subarray(0, 1));
    else hasher.update(length & 1 ? alternate : password);
  }
  const start = hasher.digest();
  if (algorithm === 'md5') return { start, p: password, s: salt };
  const p = repeatTo(digest(algorithm, ...Array<Buffer>(password.length).fill(password)), password.length);
  const s = repeatTo(digest(algorithm, ...Array<Buffer>(16 + start[0]!).fill(salt)), salt.length);
  return { start, p, s };
}

/** Verified in event-loop slices: sha-crypt hashes from passlib use 535,000 or 656,000 rounds. */
export async function verifyUnixCrypt(parsed: UnixCryptHash, password: Buffer): Promise<boolean> {
  const { start, p, s } = initialState(parsed, password, utf8(parsed.salt));
  let current = start;
  await runInSlices(parsed.rounds, (round) => {
    const hasher = createHash(parsed.algorithm).update(round & 1 ? p : current);
    if (round % 3) hasher.update(s);
    if (round % 7) hasher.update(p);
    current = hasher.update(round & 1 ? current : p).digest();
  });
  const encoded = encodeCrypt64(current, GROUPS[parsed.algorithm], LAST_CHARS[parsed.algorithm]);
  return bytesEqual(utf8(encoded), utf8(parsed.hash));
}
