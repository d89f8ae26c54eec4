import { createHash, createHmac } from 'node:crypto';
import { LIMITS } from './limits';
import { parseBoundedInt } from './encoding';

export type BcryptScheme =
  | 'bcrypt'
  | 'django-bcrypt'
  | 'django-bcrypt-sha256'
  | 'wordpress-bcrypt'
  | 'bcrypt-peppered';

export interface BcryptHash {
  family: 'bcrypt';
  scheme: BcryptScheme;
  cost: number;
  /** The 60-character `$2b$…` string alone. */
  modular: string;
  /** Devise appends a site-wide pepper to the password before bcrypt. */
  pepper?: string;
}

/** bcrypt reads at most 72 bytes; everyone else truncates, so we do too (see verifyBcrypt). */
const BCRYPT_MAX_BYTES = 72;
/**
 * The salt's 22 symbols carry 16 bytes and the hash's 31 carry 23: the bits of each last symbol past
 * the last whole byte must be zero (as Bun.password checks), which leaves 4 and 16 of the 64
 * symbols (`./A-Za-z0-9`, in that order). One spelling per hash; no second pass over a million imports.
 */
const MODULAR = /^\$2[aby]\$([0-9]{2})\$([./A-Za-z0-9]{21}[.Oeu])([./A-Za-z0-9]{30}[.CGKOSWaeimquy26])/;

const PREFIXES: readonly [string, BcryptScheme][] = [
  ['bcrypt_sha256$', 'django-bcrypt-sha256'],
  ['bcrypt$', 'django-bcrypt'],
  ['$wp', 'wordpress-bcrypt'],
];

/** `$2a$`/`$2b$`/`$2y$` + two-digit cost + 22 salt + 31 hash symbols, or one of the wrapped forms. */
export function parseBcrypt(text: string): BcryptHash | undefined {
  const [prefix, scheme] = PREFIXES.find(([known]) => text.startsWith(known)) ?? ['', 'bcrypt'];
  const rest = text.slice(prefix.length);
  const match = MODULAR.exec(rest);
  if (!match) return undefined;
  const cost = parseBoundedInt(match[1]!.replace(/^0/, ''), 4, LIMITS.bcryptMaxCost);
  if (cost === undefined) return undefined;
  const modular = match[0];
  const tail = rest.slice(modular.length);
  if (tail === '') return { family: 'bcrypt', scheme, cost, modular };
  // Only the bare form may carry a pepper, `$2a$10$…$<pepper>`: printable ASCII, no `$` or space.
  if (scheme !== 'bcrypt' || !/^\$[\x21-\x23\x25-\x7e]{1,256}$/.test(tail)) return undefined;
  return { family: 'bcrypt', scheme: 'bcrypt-peppered', cost, modular, pepper: tail.slice(1) };
}

function bcryptInput(parsed: BcryptHash, password: Buffer): Buffer {
  switch (parsed.scheme) {
    case 'django-bcrypt-sha256':
      return Buffer.from(createHash('sha256').update(password).digest('hex'));
    case 'wordpress-bcrypt':
      // WordPress 6.8+: base64 of HMAC-SHA384 keyed with the fixed string "wp-sha384".
      return Buffer.from(createHmac('sha384', 'wp-sha384').update(password).digest('base64'));
    case 'bcrypt-peppered':
      return Buffer.concat([password, Buffer.from(parsed.pepper ?? '', 'utf8')]);
    default:
      return password;
  }
}

/**
 * Bun.password hashes a bcrypt input longer than 72 bytes with SHA-512 first; PHP, Python, Go
 * and OpenBSD cut it at 72 bytes instead, so a foreign hash of a long password only verifies
 * if we cut it ourselves.
 */
export async function verifyBcrypt(parsed: BcryptHash, password: Buffer): Promise<boolean> {
  const input = bcryptInput(parsed, password).subarray(0, BCRYPT_MAX_BYTES);
  return Bun.password.verify(input, parsed.modular);
}
