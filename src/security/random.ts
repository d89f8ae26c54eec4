const ID_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Both alphabets have 32 symbols, so `byte & 31` picks uniformly. */
function randomString(alphabet: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}

/** 24 characters, 120 bits. */
export const generateId = (): string => randomString(ID_ALPHABET, 24);

/** 8-character one-time code for email verification, email update and password reset. */
export const generateOneTimeCode = (): string => randomString(CODE_ALPHABET, 8);

export const generateRecoveryCode = (): string => randomString(CODE_ALPHABET, 16);

/** The API credential printed by `gatehouse generate-secret`: 200 bits. */
export const generateSecret = (): string => randomString(ID_ALPHABET, 40);

/**
 * An imported line without `recovery_code_hash` gets a new recovery code that is never shown; the
 * user has one to give out after regenerate-recovery-code. Hashing a million codes nobody will see
 * with argon2id would take hours, so the stored value is Gatehouse's argon2id format around a random
 * salt and digest: like the hash of a random code that was thrown away, no code matches it.
 */
export function unguessableRecoveryCodeHash(): string {
  if (randomOffset + 64 > randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomOffset = 0;
  }
  // 32 bytes are 43 base64 symbols and one '=' of padding, which the PHC format leaves off.
  const salt = randomPool.toString('base64', randomOffset, randomOffset + 32).slice(0, 43);
  const digest = randomPool.toString('base64', randomOffset + 32, randomOffset + 64).slice(0, 43);
  randomOffset += 64;
  return `$argon2id$v=19$m=19456,t=2,p=1$${salt}$${digest}`;
}
/** Random bytes fetched 64 KiB at a time: one CSPRNG call per thousand lines, each byte used once. */
const randomPool = Buffer.alloc(64 * 1024);
let randomOffset = randomPool.length;
