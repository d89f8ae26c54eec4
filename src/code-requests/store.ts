import { and, asc, eq, getTableName, gt, sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db, Tx } from '../db/client';
import { writtenUnlessUserGone } from '../db/constraints';
import { challenges, emailSignInRequests, emailUpdateRequests, emailVerificationRequests, passwordResetRequests } from '../db/schema';

/** A request's own counter: its 5th wrong code invalidates it (seed, Limits; API.md §5). */
export const MAX_WRONG_CODES = 5;

/** From its `expires_at` second on, a request behaves as if it did not exist (the sweep deletes it later). */
export const isLive = (expiresAt: SQLiteColumn, nowSeconds: number) => gt(expiresAt, nowSeconds);

/** A request table (its rows carry a wrong-code counter and an expiry), and the column that names one row. */
export interface CountedRequests {
  table: SQLiteTable & { failedAttempts: SQLiteColumn; expiresAt: SQLiteColumn };
  key: SQLiteColumn;
}

/** Alike for every request kind with ids of its own and several rows per user; email verification, one row per user keyed by it, has its own. */
export interface RequestRows<Row> {
  /** False when the user no longer exists. */
  insert(record: Row): Promise<boolean>;
  findLive(id: string, nowSeconds: number): Promise<Row | undefined>;
  /** Oldest first, ties by id. */
  listLive(userId: string, nowSeconds: number): Promise<Row[]>;
  deleteAllOf(userId: string): Promise<void>;
}

type RequestTable = SQLiteTable & { id: SQLiteColumn; userId: SQLiteColumn; createdAt: SQLiteColumn; expiresAt: SQLiteColumn };

export function sqliteRequestRows<T extends RequestTable>(db: Db, table: T): RequestRows<T['$inferSelect']> {
  const liveOf = (column: SQLiteColumn, value: string, nowSeconds: number) => and(eq(column, value), isLive(table.expiresAt, nowSeconds));
  return {
    insert: async (record) => writtenUnlessUserGone(() => db.insert(table).values(record).run()),
    findLive: async (id, nowSeconds) => db.select().from(table).where(liveOf(table.id, id, nowSeconds)).get(),
    listLive: async (userId, nowSeconds) =>
      db.select().from(table).where(liveOf(table.userId, userId, nowSeconds)).orderBy(asc(table.createdAt), asc(table.id)).all(),
    async deleteAllOf(userId) {
      db.delete(table).where(eq(table.userId, userId)).run();
    },
  };
}

/** `gone`: the row had vanished or expired, so nothing was counted. */
export type WrongCodeOutcome = 'counted' | 'invalidated' | 'gone';

/**
 * Counts one wrong code on a live row with a conditional increment, and deletes the row on the 5th,
 * in one transaction: parallel wrong codes can never get more than five tries. For feature stores;
 * `alsoInTransaction` appends the wrong code's events, told the outcome (so it may write them also
 * when the row is gone, or only when the code was counted).
 */
export function recordWrongCode(
  db: Db,
  rows: CountedRequests,
  id: string,
  nowSeconds: number,
  alsoInTransaction: (tx: Tx, outcome: WrongCodeOutcome) => void = () => {},
): WrongCodeOutcome {
  const counter = sql.identifier(rows.table.failedAttempts.name);
  return db.transaction((tx) => {
    // all(), not get(): on raw SQL drizzle's get() answers an array of values, not a named row.
    const [counted] = tx.all<{ attempts: number }>(
      sql`update ${rows.table} set ${counter} = ${counter} + 1
          where ${rows.key} = ${id} and ${counter} < ${MAX_WRONG_CODES} and ${isLive(rows.table.expiresAt, nowSeconds)}
          returning ${counter} as attempts`,
    );
    const outcome: WrongCodeOutcome = counted === undefined ? 'gone' : counted.attempts < MAX_WRONG_CODES ? 'counted' : 'invalidated';
    if (outcome === 'invalidated') tx.run(sql`delete from ${rows.table} where ${rows.key} = ${id}`);
    alsoInTransaction(tx, outcome);
    return outcome;
  });
}

/** The four request kinds (API.md §3, §15), and passkey challenges (API.md §13), which expire the same way. */
export type RequestKind = 'password_reset' | 'email_update' | 'email_verification' | 'email_sign_in' | 'passkey_challenge';
export const REQUEST_KINDS: RequestKind[] = ['password_reset', 'email_update', 'email_verification', 'email_sign_in', 'passkey_challenge'];

/** What the sweep needs from storage. */
export interface CodeRequestStore {
  /** Deletes up to `limit` rows of one kind with `expires_at <= nowSeconds`; answers how many. */
  deleteExpired(kind: RequestKind, nowSeconds: number, limit: number): Promise<number>;
}

const TABLES = {
  password_reset: passwordResetRequests,
  email_update: emailUpdateRequests,
  email_verification: emailVerificationRequests,
  email_sign_in: emailSignInRequests,
  passkey_challenge: challenges,
} as const;

export function sqliteCodeRequestStore(db: Db): CodeRequestStore {
  const deleteSql = (kind: RequestKind) => {
    const table = TABLES[kind];
    const name = getTableName(table);
    // One statement of its own (auto-commit), so other writers get the database between batches.
    return `delete from "${name}" where rowid in (select rowid from "${name}" where "${table.expiresAt.name}" <= ? limit ?)`;
  };
  return {
    // query() caches the compiled statement, so each batch reuses it.
    deleteExpired: async (kind, nowSeconds, limit) => db.$client.query(deleteSql(kind)).run(nowSeconds, limit).changes,
  };
}
