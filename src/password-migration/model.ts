/**
 * API.md §19: users imported from a system that never hands out hashes keep this in place of a
 * hash until their password is taken over. No hash format reads it (every check of it fails), the
 * API refuses it as a `password_hash`, and replacing it is the one conditional statement that ends
 * the wait: whatever stores a password (a migration, a reset, an update) ends it.
 */
export const AWAITING_MIGRATION = '!awaiting-password-migration';

export const isAwaitingMigration = (passwordHash: string): boolean => passwordHash === AWAITING_MIGRATION;

/** How an export line carries a password (API.md §11): the hash, or, for a user still awaiting, as it was imported. */
export const passwordFields = (passwordHash: string): string =>
  isAwaitingMigration(passwordHash) ? '"password_hash":null,"migrate_password":true' : `"password_hash":${JSON.stringify(passwordHash)}`;

/**
 * An import line's password: what `hashOf` reads from `password_hash`, or AWAITING_MIGRATION for
 * `"password_hash": null, "migrate_password": true`; else the field at fault and why.
 */
export function importedPassword(record: Record<string, unknown>, hashOf: () => string | null): string | { field: string; detail: string } {
  const migrate = record.migrate_password;
  if (migrate !== undefined && migrate !== null && typeof migrate !== 'boolean') return { field: 'migrate_password', detail: 'must be true or false' };
  if (migrate !== true) return hashOf() ?? { field: 'password_hash', detail: 'required (or null with "migrate_password": true)' };
  if (record.password_hash !== undefined && record.password_hash !== null) return { field: 'password_hash', detail: 'must be null with "migrate_password": true' };
  return AWAITING_MIGRATION;
}

/** Where the hook is and the key its requests are signed with (`--password-migration-secret`). */
export interface MigrationHookTarget {
  url: string;
  key: Uint8Array;
}

/** The whole wait for the hook's answer, from connecting to its last byte (API.md §19). */
export const HOOK_TIMEOUT_MS = 5_000;
/** The most of the hook's answer that is read; `{"match": false}` is 16 bytes. */
export const MAX_HOOK_ANSWER_BYTES = 4 * 1024;

/**
 * How a call of the hook ended, for the metrics: its two answers, or why there was none to use
 * (`timeout`; `unreachable`: no connection; `bad_status`: not 200, a redirect included; `bad_answer`:
 * 200 with a body that is not `{"match": true|false}` or is over MAX_HOOK_ANSWER_BYTES).
 */
export const HOOK_OUTCOMES = ['match', 'no_match', 'timeout', 'unreachable', 'bad_status', 'bad_answer'] as const;
export type HookOutcome = (typeof HOOK_OUTCOMES)[number];

/** What the password check does next: store the password, count a wrong one, or answer 503. */
export type MigrationVerdict = 'match' | 'no_match' | 'unavailable';

/** The body the hook receives, and nothing else (API.md §19). */
export const hookBody = (user: { id: string; email: string | null }, password: string): string =>
  JSON.stringify({ user_id: user.id, email: user.email, password });

/**
 * `{"match": true}` or `{"match": false}` exactly as to the field: any other value (`"yes"`, 1,
 * missing) is no answer. Other fields are ignored.
 */
export function readHookAnswer(text: string): boolean | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const match = (parsed as { match?: unknown }).match;
  return typeof match === 'boolean' ? match : undefined;
}

/**
 * The hook receives passwords in the clear: https, or http only to this machine (a hook beside
 * the server, or a tunnel to the old system). `localhost`, 127.0.0.0/8 and ::1.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
