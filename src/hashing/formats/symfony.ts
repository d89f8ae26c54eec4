import { createHash } from 'node:crypto';
import { LIMITS } from './limits';
import { bytesEqual, decodeBase64, parseBoundedInt, utf8 } from './encoding';
import { runInSlices } from './sliced';

export interface SymfonyHash {
  family: 'symfony';
  scheme: 'symfony-digest';
  iterations: number;
  salt: string;
  hash: Buffer;
}

/**
 * Symfony's legacy MessageDigestPasswordHasher with SHA-512, in Clerk's spelling:
 * `sha512_symfony$<iterations>$<salt>$<base64 hash>` (Symfony's default is 5,000 iterations).
 */
export function parseSymfony(text: string): SymfonyHash | undefined {
  const [name, iterationsText, salt, hashText, ...rest] = text.split('$');
  if (name !== 'sha512_symfony' || salt === undefined || hashText === undefined || rest.length > 0) return undefined;
  const iterations = parseBoundedInt(iterationsText ?? '', 1, LIMITS.loopMaxSteps);
  // Symfony refuses salts with braces, since it writes the salt as `{salt}`.
  if (iterations === undefined || !/^[^{}$]{0,128}$/.test(salt)) return undefined;
  const hash = decodeBase64(hashText, 'required');
  if (hash?.length !== 64) return undefined;
  return { family: 'symfony', scheme: 'symfony-digest', iterations, salt, hash };
}

/** digest = SHA-512(password ‖ "{salt}"), then iterations − 1 times SHA-512(digest ‖ password ‖ "{salt}"). */
export async function verifySymfony(parsed: SymfonyHash, password: Buffer): Promise<boolean> {
  const salted = parsed.salt === '' ? password : Buffer.concat([password, utf8(`{${parsed.salt}}`)]);
  let digest = createHash('sha512').update(salted).digest();
  await runInSlices(parsed.iterations - 1, () => {
    digest = createHash('sha512').update(digest).update(salted).digest();
  });
  return bytesEqual(digest, parsed.hash);
}
