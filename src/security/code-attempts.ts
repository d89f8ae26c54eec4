import { sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { constantTimeEqual, normalizeCode } from './random';

/** A request's own counter: its 5th wrong code invalidates it (seed, Limits; API.md §5). */
export const MAX_WRONG_CODES = 5;

/** A request table whose rows carry a wrong-code counter, and the column that names one row. */
export interface AttemptCountedRows {
  table: SQLiteTable;
  key: SQLiteColumn;
  failedAttempts: SQLiteColumn;
}

/** Case-insensitive, constant-time. */
export const codeMatches = (given: string, issued: string): boolean =>
  constantTimeEqual(normalizeCode(given), normalizeCode(issued));

/**
 * Counts one wrong code on the row and deletes the row on the 5th, in one transaction, so parallel
 * wrong codes can never get more than five tries. Returns true when this call invalidated the row.
 */
export function recordWrongCode(db: Db, rows: AttemptCountedRows, id: string): boolean {
  const counter = sql.identifier(rows.failedAttempts.name);
  return db.transaction((tx) => {
    // all(), not get(): on raw SQL drizzle's get() answers an array of values, not a named row.
    const [counted] = tx.all<{ attempts: number }>(
      sql`update ${rows.table} set ${counter} = ${counter} + 1 where ${rows.key} = ${id} returning ${counter} as attempts`,
    );
    if (counted === undefined || counted.attempts < MAX_WRONG_CODES) return false;
    tx.run(sql`delete from ${rows.table} where ${rows.key} = ${id}`);
    return true;
  });
}
