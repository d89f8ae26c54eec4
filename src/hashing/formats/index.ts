import { isCurrentArgon2id, parseArgon2, verifyArgon2, type Argon2Hash } from './argon2';
import { parseBcrypt, verifyBcrypt, type BcryptHash } from './bcrypt';
import { parseDigest, verifyDigest, type DigestHash } from './digests';
import { utf8 } from './encoding';
import { parseFirebaseScrypt, verifyFirebaseScrypt, type FirebaseScryptHash } from './firebase-scrypt';
import { parseHmac, verifyHmac, type HmacHash } from './hmac';
import { parsePbkdf2, verifyPbkdf2, type Pbkdf2Hash } from './pbkdf2';
import { parsePhpass, verifyPhpass, type PhpassHash } from './phpass';
import { parseScrypt, verifyScrypt, type ScryptHash } from './scrypt';
import { parseSymfony, verifySymfony, type SymfonyHash } from './symfony';
import { parseUnixCrypt, verifyUnixCrypt, type UnixCryptHash } from './unix-crypt';

export { isCurrentArgon2id };

/** A password hash in one of the formats Gatehouse imports; `scheme` names the exact spelling. */
export type ParsedHash =
  | Argon2Hash
  | BcryptHash
  | Pbkdf2Hash
  | ScryptHash
  | FirebaseScryptHash
  | PhpassHash
  | UnixCryptHash
  | DigestHash
  | HmacHash
  | SymfonyHash;

export type HashScheme = ParsedHash['scheme'];

/** The longest accepted form (Firebase's, with a 64-byte signer key) is about 250 characters. */
const MAX_HASH_LENGTH = 1024;

/** Each parser checks its own prefix; the shapes do not overlap. */
const PARSERS: readonly ((text: string) => ParsedHash | undefined)[] = [
  parseArgon2,
  parseBcrypt,
  parsePbkdf2,
  parseScrypt,
  parseFirebaseScrypt,
  parsePhpass,
  parseUnixCrypt,
  parseHmac,
  parseSymfony,
  parseDigest,
];

/**
 * Recognises a hash by its shape alone. Anything malformed, or with parameters that would make
 * one check cost much more than a second or 64 MiB, is not recognised (→ UNSUPPORTED_PASSWORD_HASH).
 */
export function parsePasswordHash(text: string): ParsedHash | undefined {
  if (text.length === 0 || text.length > MAX_HASH_LENGTH) return undefined;
  for (const parse of PARSERS) {
    const parsed = parse(text);
    if (parsed) return parsed;
  }
  return undefined;
}

/** Checks a password with the hash's own algorithm and parameters; slow work stays off the event loop. */
export function verifyParsedHash(parsed: ParsedHash, password: string): Promise<boolean> {
  const bytes = utf8(password);
  switch (parsed.family) {
    case 'argon2':
      return verifyArgon2(parsed, bytes);
    case 'bcrypt':
      return verifyBcrypt(parsed, bytes);
    case 'pbkdf2':
      return verifyPbkdf2(parsed, bytes);
    case 'scrypt':
      return verifyScrypt(parsed, bytes);
    case 'firebase-scrypt':
      return verifyFirebaseScrypt(parsed, bytes);
    case 'phpass':
      return verifyPhpass(parsed, bytes);
    case 'unix-crypt':
      return verifyUnixCrypt(parsed, bytes);
    case 'digest':
      return verifyDigest(parsed, bytes);
    case 'hmac':
      return verifyHmac(parsed, bytes);
    case 'symfony':
      return verifySymfony(parsed, bytes);
  }
}
