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
