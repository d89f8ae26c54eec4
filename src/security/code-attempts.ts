import { sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { isLive } from '../db/request-lifetime';
import { constantTimeEqual, normalizeCode } from './random';

/** A request's own counter: its 5th wrong code invalidates it (seed, Limits; API.md §5). */
const MAX_WRONG_CODES = 5;

/** A request table (its rows carry a wrong-code counter and an expiry), and the column that names one row. */
export interface AttemptCountedRows {
  table: SQLiteTable & { failedAttempts: SQLiteColumn; expiresAt: SQLiteColumn };
  key: SQLiteColumn;
}

/** Case-insensitive, constant-time. */
export const codeMatches = (given: string, issued: string): boolean =>
  constantTimeEqual(normalizeCode(given), normalizeCode(issued));

/** `gone`: the row had vanished or expired, so nothing was counted. */
export type WrongCodeOutcome = 'counted' | 'invalidated' | 'gone';

/**
 * Counts one wrong code on a live row with a conditional increment, and deletes the row on the 5th,
 * in one transaction: parallel wrong codes can never get more than five tries.
 */
export function recordWrongCode(db: Db, rows: AttemptCountedRows, id: string, nowSeconds: number): WrongCodeOutcome {
  const counter = sql.identifier(rows.table.failedAttempts.name);
  return db.transaction((tx) => {
    // all(), not get(): on raw SQL drizzle's get() answers an array of values, not a named row.
    const [counted] = tx.all<{ attempts: number }>(
      sql`update ${rows.table} set ${counter} = ${counter} + 1
          where ${rows.key} = ${id} and ${counter} < ${MAX_WRONG_CODES} and ${isLive(rows.table.expiresAt, nowSeconds)}
          returning ${counter} as attempts`,
    );
    if (counted === undefined) return 'gone';
    if (counted.attempts < MAX_WRONG_CODES) return 'counted';
    tx.run(sql`delete from ${rows.table} where ${rows.key} = ${id}`);
    return 'invalidated';
  });
}
