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
