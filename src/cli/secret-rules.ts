import { lstatSync, readFileSync } from 'node:fs';
import { UsageError } from './values';

export const MIN_SECRET_LENGTH = 16;

/**
 * At least 16 characters of printable ASCII (API.md §9): anything else either cannot travel in an
 * HTTP header unchanged (spaces around it are stripped, non-ASCII is not reliably kept) or is too
 * short to resist guessing. The message never repeats the secret.
 */
export function checkSecret(secret: string, source: string): string {
  if (secret === '') throw new UsageError(`${source}: the secret must not be empty`);
  if (!/^[\x20-\x7e]*$/.test(secret)) throw new UsageError(`${source}: the secret must be printable ASCII only`);
  if (secret.trim() !== secret) throw new UsageError(`${source}: the secret must not start or end with whitespace`);
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new UsageError(`${source}: the secret must be at least ${MIN_SECRET_LENGTH} characters, got ${secret.length} ('gatehouse generate-secret' makes one)`);
  }
  return secret;
}

/**
 * A secret file must be a regular file that group and others cannot read (API.md §9). A symlink is
 * refused rather than followed: whoever can point it elsewhere chooses the credential.
 */
export function assertPrivateFile(path: string, what = 'secret file'): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) throw new UsageError(`${what} ${path} is a symlink; give the file itself`);
  if (!stat.isFile()) throw new UsageError(`${what} ${path} is not a regular file`);
  const mode = stat.mode & 0o777;
  if ((mode & 0o044) !== 0) {
    throw new UsageError(`${what} ${path} is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}); chmod 600 it`);
  }
}

export const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** What a secret file holds, without the surrounding whitespace (a trailing newline is not part of it). */
export function readPrivateFile(path: string, what = 'secret file'): string {
  if (!exists(path)) throw new UsageError(`${what} ${path} does not exist`);
  assertPrivateFile(path, what);
  return readFileSync(path, 'utf8').trim();
}
