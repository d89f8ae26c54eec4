import { argon2Work, LIMITS } from './limits';
import { decodeBase64, parseBoundedInt, parseParams } from './encoding';

export interface Argon2Hash {
  family: 'argon2';
  scheme: 'argon2' | 'django-argon2';
  variant: 'argon2id' | 'argon2i' | 'argon2d';
  memoryKiB: number;
  iterations: number;
  parallelism: number;
  saltBytes: number;
  hashBytes: number;
  /** The PHC string alone, as Bun.password reads it. */
  phc: string;
}

const VARIANTS = ['argon2id', 'argon2i', 'argon2d'] as const;
/** Django stores `argon2` + the PHC string. */
const DJANGO_PREFIX = 'argon2$';

/**
 * Gatehouse's own hashes (32-byte salt and digest, canonical base64: the last symbol carries two
 * zero bits) fill every export, so import recognises their exact shape before the general parse.
 */
const CURRENT = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]\$[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]$/;
const current = (phc: string): Argon2Hash =>
  ({ family: 'argon2', scheme: 'argon2', variant: 'argon2id', memoryKiB: 19_456, iterations: 2, parallelism: 1, saltBytes: 32, hashBytes: 32, phc });

/** `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, unpadded standard base64; only version 19. */
export function parseArgon2(text: string): Argon2Hash | undefined {
  if (CURRENT.test(text)) return current(text);
  const django = text.startsWith(DJANGO_PREFIX);
  const phc = django ? text.slice(DJANGO_PREFIX.length - 1) : text;
  if (!phc.startsWith('$argon2')) return undefined; // every other format meets this parser first
  const [empty, name, version, params, saltText, hashText, ...rest] = phc.split('$');
  const variant = VARIANTS.find((known) => known === name);
  if (empty !== '' || !variant || version !== 'v=19' || rest.length > 0) return undefined;
  if (params === undefined || saltText === undefined || hashText === undefined) return undefined;
  const values = parseParams(params, ['m', 't', 'p']);
  if (!values) return undefined;
  const parallelism = parseBoundedInt(values[2]!, 1, LIMITS.argon2MaxParallelism);
  if (parallelism === undefined) return undefined;
  const memoryKiB = parseBoundedInt(values[0]!, 8 * parallelism, LIMITS.argon2MaxMemoryKiB);
  const iterations = parseBoundedInt(values[1]!, 1, LIMITS.argon2MaxIterations);
  if (memoryKiB === undefined || iterations === undefined) return undefined;
  if (argon2Work(memoryKiB, iterations, parallelism) > LIMITS.argon2MaxWork) return undefined;
  const salt = decodeBase64(saltText, 'none');
  const hash = decodeBase64(hashText, 'none');
  if (!salt || !hash || salt.length < 8 || salt.length > 64 || hash.length < 16 || hash.length > 64) return undefined;
  return {
    family: 'argon2',
    scheme: django ? 'django-argon2' : 'argon2',
    variant,
    memoryKiB,
    iterations,
    parallelism,
    saltBytes: salt.length,
    hashBytes: hash.length,
    phc,
  };
}

/** Bun.password reads all three variants and uses the parameters in the string. */
export async function verifyArgon2(parsed: Argon2Hash, password: Buffer): Promise<boolean> {
  return Bun.password.verify(password, parsed.phc);
}

/** What `Bun.password.hash(pw, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 })` writes. */
export function isCurrentArgon2id(text: string): boolean {
  const parsed = parseArgon2(text);
  return (
    parsed?.scheme === 'argon2' &&
    parsed.variant === 'argon2id' &&
    parsed.memoryKiB === 19_456 &&
    parsed.iterations === 2 &&
    parsed.parallelism === 1 &&
    parsed.saltBytes === 32 &&
    parsed.hashBytes === 32
  );
}
