import { createHash } from 'node:crypto';
import { LIMITS } from './limits';
import { bytesEqual, utf8 } from './encoding';
import { crypt64Value, encodeCrypt64, isCrypt64, sequentialGroups } from './crypt64';
import { runInSlices } from './sliced';

export interface PhpassHash {
  family: 'phpass';
  scheme: 'phpass';
  /** `$P$` (WordPress before 6.8, Drupal 7 imports) or `$H$` (phpBB): the same algorithm. */
  prefix: '$P$' | '$H$';
  countLog2: number;
  salt: string;
  hash: string;
}

const MD5_GROUPS = sequentialGroups(16);
/** phpass itself accepts 7 to 30; above our loop bound one check would take seconds. */
const MAX_COUNT_LOG2 = Math.floor(Math.log2(LIMITS.loopMaxSteps));

/** `$P$` + one symbol for log2(rounds) + 8 salt symbols + 22 hash symbols. */
export function parsePhpass(text: string): PhpassHash | undefined {
  const prefix = text.slice(0, 3);
  if ((prefix !== '$P$' && prefix !== '$H$') || text.length !== 34 || !isCrypt64(text.slice(3))) return undefined;
  const countLog2 = crypt64Value(text[3]);
  // 16 bytes end in one byte spread over two symbols: the last one holds two bits.
  if (countLog2 < 7 || countLog2 > MAX_COUNT_LOG2 || crypt64Value(text[33]) > 3) return undefined;
  return { family: 'phpass', scheme: 'phpass', prefix, countLog2, salt: text.slice(4, 12), hash: text.slice(12) };
}

/** MD5(salt ‖ password), then 2^countLog2 times MD5(previous ‖ password), in event-loop slices. */
export async function verifyPhpass(parsed: PhpassHash, password: Buffer): Promise<boolean> {
  let digest = createHash('md5').update(parsed.salt).update(password).digest();
  await runInSlices(2 ** parsed.countLog2, () => {
    digest = createHash('md5').update(digest).update(password).digest();
  });
  return bytesEqual(utf8(encodeCrypt64(digest, MD5_GROUPS, 2)), utf8(parsed.hash));
}
