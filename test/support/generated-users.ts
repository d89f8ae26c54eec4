import { generateId } from '../../src/security/random';

/** A pinned bcrypt vector (cost 4, password PASSWORD of password-formats.vectors.ts): cheap to parse, never verified in bulk. */
export const GENERATED_HASH = '$2a$04$f6.WT/QSKTApLr87p2C7Te7XLydE9SGdjcmXQEZCrxkQK0dTPGmI2';
export const GENERATED_TOTP_KEY = '0KHD8uS1lod4aVpLPC0eDxEiM0Q=';
const FIRST_CREATED_AT = 1_700_000_000;

export interface GenerateOptions {
  count: number;
  /** Replaces these lines (1-based) with the given text. */
  replace?: Map<number, string>;
  /** Every nth user gets a TOTP key. */
  totpEvery?: number;
  /**
   * Emails in random order, as in a real user table ordered by creation; otherwise user{n}@example.com,
   * whose order follows the lines closely enough that the email index is written almost in sequence.
   */
  randomEmails?: boolean;
}

/** The NDJSON line of generated user n (1-based): random id, unique email, one second apart. */
export function generatedLine(n: number, options: { totpEvery?: number; randomEmails?: boolean } = {}): string {
  const totp = options.totpEvery !== undefined && n % options.totpEvery === 0 ? `,"totp_key":"${GENERATED_TOTP_KEY}","totp_last_step":${n}` : '';
  const email = options.randomEmails ? `${generateId().slice(0, 8)}.${n}@example.com` : `user${n}@example.com`;
  return `{"id":"${generateId()}","created_at":${FIRST_CREATED_AT + n},"email":"${email}","email_verified":${n % 2 === 0},"password_hash":"${GENERATED_HASH}"${totp}}`;
}

/** Writes `count` generated users as NDJSON, in 1 MB pieces. */
export async function writeGeneratedUsers(path: string, options: GenerateOptions): Promise<void> {
  const writer = Bun.file(path).writer();
  let piece = '';
  for (let n = 1; n <= options.count; n++) {
    piece += `${options.replace?.get(n) ?? generatedLine(n, options)}\n`;
    if (piece.length > 1_000_000) {
      writer.write(piece);
      piece = '';
    }
  }
  writer.write(piece);
  await writer.end();
}
