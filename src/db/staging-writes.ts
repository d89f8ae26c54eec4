/**
 * The writes of an import (src/transfer) into the tables on SQLite: of its staged lines (the tables of
 * db/staging-checks.ts, in an attached temporary database), or of rows as they are read.
 */
import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { WEBHOOK_ID_SQL } from './bulk';
import type { LoadIndexes } from './bulk-load';
import { WRITABLE } from './staging-checks';

export const USER_COLUMNS = 'id, created_at, email, email_verified, password_hash, recovery_code_hash, disabled, disabled_until';
export const PASSKEY_COLUMNS = 'id, credential_id, public_key, counter, transports, backed_up, name, created_at, last_used_at';
// Staged untyped (SQLite keeps each value as given); the columns of api_keys but its user.
export const API_KEY_COLUMNS = 'id, name, scopes, secret_hash, start, created_at, expires_at, last_used_at';
export const IN_RANGE = `s.line > ? AND s.line <= ? AND ${WRITABLE}`;

/** The most lines of a range whose events are sorted in memory (about 160 bytes each: 8 MB). */
const SORTED_AT_MOST = 50_000;

/**
 * Writes the staged lines matching `where` (its parameters after `now`: a range, or one line) and
 * their `user.imported` events; answers the users written. With `OR ROLLBACK` a taken key ends the
 * whole transaction, so SQLite keeps no statement journal (a copy of every existing page a statement
 * changes, to undo it alone: a third of an import's writes). Events go in by user id: the events_user
 * index takes them in one sweep (a third less time than at random). Sorting 150,000 lines took 25 MB
 * more RSS, so a longer range reads them in id order from the staged id index (45 ms a million lines).
 * With `events` 'as staged' they go in the staged order, for a load that builds the index afterwards.
 */
export function lineWriter(sqlite: Database, where: string, conflict: 'OR ROLLBACK' | 'OR ABORT', events: 'by user' | 'as staged' = 'by user') {
  const eventsFrom = (from: string, order: string) => `INSERT ${conflict} INTO events (time, type, user_id, webhook_id) SELECT ?, 'user.imported', id, ${WEBHOOK_ID_SQL} FROM ${from} WHERE ${where} ${order}`;
  const statements = [
    `INSERT ${conflict} INTO users (${USER_COLUMNS}) SELECT ${USER_COLUMNS} FROM staged_users s WHERE ${where}`,
    `INSERT ${conflict} INTO totp_credentials (user_id, created_at, key, last_used_step) SELECT id, ?, totp_key, totp_last_step FROM staged_users s WHERE ${where} AND totp_key IS NOT NULL`,
    `INSERT ${conflict} INTO passkeys (user_id, ${PASSKEY_COLUMNS}) SELECT s.id, ${PASSKEY_COLUMNS.replace(/\w+/g, 'k.$&')}
     FROM staged_passkeys k JOIN staged_users s ON s.line = k.line WHERE ${where}`,
    `INSERT ${conflict} INTO api_keys (user_id, ${API_KEY_COLUMNS}) SELECT s.id, ${API_KEY_COLUMNS.replace(/\w+/g, 'k.$&')}
     FROM staged_api_keys k JOIN staged_users s ON s.line = k.line WHERE ${where}`,
    eventsFrom('staged_users s', 'ORDER BY id'),
    eventsFrom('staged_users s INDEXED BY staged_users_id', ''),
    eventsFrom('staged_users s', ''),
  ].map((text) => sqlite.prepare(text));
  const [users, totp, passkeys, apiKeys, sortedEvents, scannedEvents, stagedOrderEvents] = statements as [(typeof statements)[0], ...typeof statements];
  return (now: number, ...where: number[]): number => {
    const written = users.run(...where).changes;
    totp!.run(now, ...where);
    passkeys!.run(...where);
    apiKeys!.run(...where);
    const [from, to] = where as [number, number?];
    (events === 'as staged' ? stagedOrderEvents : to !== undefined && to - from > SORTED_AT_MOST ? scannedEvents : sortedEvents)!.run(now, ...where);
    return written;
  };
}

/** Into an empty database nobody else has open, the load writes these tables' indexes once, at the end (db/bulk-load.ts). */
export const LOADED: LoadIndexes = {
  tables: ['users', 'totp_credentials', 'passkeys', 'api_keys', 'events'],
  // Every imported event has the same type and time, in id order.
  appended: ['events_type', 'events_time'],
};

/** Rows per statement: one seek of the table's end and one AUTOINCREMENT update for them all (a million users' writes 7.2 s instead of 10). */
const ROWS_A_STATEMENT = 64;
/** `head` (INSERT ... VALUES) with `row` (one row's values) repeated; runs a statement per ROWS_A_STATEMENT rows, then one a row. */
export function rowInserter(sqlite: Database, head: string, row: string) {
  const many = sqlite.prepare(`${head} ${Array(ROWS_A_STATEMENT).fill(row).join(', ')}`);
  const one = sqlite.prepare(`${head} ${row}`);
  return (rows: SQLQueryBindings[][]) => {
    let at = 0;
    for (; at + ROWS_A_STATEMENT <= rows.length; at += ROWS_A_STATEMENT) many.run(...rows.slice(at, at + ROWS_A_STATEMENT).flat());
    for (; at < rows.length; at++) one.run(...rows[at]!);
  };
}
