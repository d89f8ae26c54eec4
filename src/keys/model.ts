import { isOperationId, READ_OPERATIONS } from './operations';

/** A key's name: what the access log, the events' `actor` and the metrics call it (API.md §17). */
export const KEY_NAME = /^[a-z0-9_-]{1,64}$/;
const DIGEST = /^sha256:([0-9a-fA-F]{64})$/;
/** What makes a new key: 32 random bytes, base64url, after this prefix (so a scanner can spot one). */
export const KEY_PREFIX = 'ghk_';
/** The key --secret and the generated secret stand for. */
export const DEFAULT_KEY_NAME = 'default';

/** One caller's key, as the keys file describes it: never the key itself, only its digest. */
export interface ServiceKey {
  readonly name: string;
  /** As written: `*`, `read`, or operationIds joined by commas. */
  readonly scope: string;
  /** Lower-case hex SHA-256 of the key. */
  readonly digest: string;
  /** Whether the scope allows the operation; undefined (a route with no operationId) only under `*`. */
  permits(operationId: string | undefined): boolean;
}

/** A keys file line that does not parse; the message never repeats the line, which may hold a pasted key. */
export class KeysFileError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = 'KeysFileError';
  }
}

/** Hex SHA-256 of a presented credential: what the keys file stores and requests are looked up by. */
export const digestOf = (key: string): string => Bun.SHA256.hash(key, 'hex') as string;

/** The allowed operations of a scope, or a reason it is not one. */
export function parseScope(scope: string): { permits: ServiceKey['permits'] } | { refused: string } {
  if (scope === '*') return { permits: () => true };
  const ids = scope === 'read' ? READ_OPERATIONS : scope.split(',');
  for (const id of ids) {
    if (id === '') return { refused: 'an empty operationId in the scope' };
    // Only what could be an operationId is repeated: a key pasted in the wrong column must not reach a log.
    const shown = /^[a-z][a-zA-Z0-9]{0,63}$/.test(id) ? ` '${id}'` : '';
    if (!isOperationId(id)) return { refused: `unknown operationId${shown} (a scope is *, read, or operationIds joined by commas)` };
  }
  const allowed = new Set<string>(ids);
  return { permits: (operationId) => operationId !== undefined && allowed.has(operationId) };
}

export function makeKey(name: string, scope: string, digest: string): ServiceKey | string {
  if (!KEY_NAME.test(name)) return `invalid name: 1 to 64 of a-z, 0-9, _ and -`;
  const parsed = parseScope(scope);
  if ('refused' in parsed) return parsed.refused;
  return { name, scope, digest, permits: parsed.permits };
}

/**
 * The keys of a keys file: one `NAME SCOPE DIGEST` a line, `#` to the end of a line a comment.
 * A malformed line, a name or a key given twice, an unknown operationId: the whole file is refused.
 */
export function parseKeysFile(text: string): ServiceKey[] {
  const keys: ServiceKey[] = [];
  const lineOfName = new Map<string, number>();
  const lineOfDigest = new Map<string, number>();
  text.split('\n').forEach((raw, index) => {
    const number = index + 1;
    const fields = raw.replace(/#.*/, '').trim().split(/\s+/).filter((field) => field !== '');
    if (fields.length === 0) return;
    if (fields.length !== 3) throw new KeysFileError(number, `expected NAME SCOPE DIGEST, got ${fields.length} fields`);
    const [name, scope, digestField] = fields as [string, string, string];
    const digest = DIGEST.exec(digestField)?.[1]?.toLowerCase();
    if (digest === undefined) throw new KeysFileError(number, 'the digest must be sha256: and 64 hex digits (the file holds digests, never keys)');
    const key = makeKey(name, scope, digest);
    if (typeof key === 'string') throw new KeysFileError(number, key);
    const sameName = lineOfName.get(name);
    if (sameName !== undefined) throw new KeysFileError(number, `the name '${name}' is already on line ${sameName}`);
    const sameDigest = lineOfDigest.get(digest);
    if (sameDigest !== undefined) throw new KeysFileError(number, `the same key as line ${sameDigest}`);
    lineOfName.set(name, number);
    lineOfDigest.set(digest, number);
    keys.push(key);
  });
  return keys;
}

/** A keys file line for a key. */
export const keyLine = (key: Pick<ServiceKey, 'name' | 'scope' | 'digest'>): string => `${key.name} ${key.scope} sha256:${key.digest}`;

/** --secret (or the generated secret) as the one key `default`, allowed everything. */
export const defaultKey = (secret: string): ServiceKey => ({ name: DEFAULT_KEY_NAME, scope: '*', digest: digestOf(secret), permits: () => true });

/** A new key: `ghk_` and 32 random bytes in base64url. */
export const generateKey = (): string => KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url');
