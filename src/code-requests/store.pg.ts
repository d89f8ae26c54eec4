import { and, asc, eq, getTableName, gt, lt, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { PgDb, PgTx } from '../db/pg-client';
import { writtenUnlessUserGone } from '../db/pg-errors';
import { inTransaction, lockOwner, lockUser } from '../db/pg-transaction';
import { challenges, emailSignInRequests, emailUpdateRequests, emailVerificationRequests, passwordResetRequests } from '../db/pg-schema';
import { MAX_WRONG_CODES, type CodeRequestStore, type RequestKind, type RequestRows, type WrongCodeOutcome } from './store';

export const isLivePg = (expiresAt: PgColumn, nowSeconds: number) => gt(expiresAt, nowSeconds);

export interface CountedPgRequests {
  table: PgTable & { failedAttempts: PgColumn; expiresAt: PgColumn; userId: PgColumn };
  key: PgColumn;
}

type RequestTablePg = PgTable & { id: PgColumn; userId: PgColumn; createdAt: PgColumn; expiresAt: PgColumn };

export function postgresRequestRows<T extends RequestTablePg>(db: PgDb, table: T): RequestRows<T['$inferSelect']> {
  const liveOf = (column: PgColumn, value: string, nowSeconds: number) => and(eq(column, value), isLivePg(table.expiresAt, nowSeconds));
  // from() refuses a data-modifying subquery without `returning`, a check TypeScript cannot settle for a
  // generic T; T is a table, so the guard cannot apply, and the rows are still typed from T.
  const rows = () => db.select().from<T>(table as never);
  return {
    insert: async (record) => writtenUnlessUserGone(db.insert(table).values(record)),
    findLive: async (id, nowSeconds) => (await rows().where(liveOf(table.id, id, nowSeconds)))[0],
    listLive: (userId, nowSeconds) => rows().where(liveOf(table.userId, userId, nowSeconds)).orderBy(asc(table.createdAt), asc(table.id)),
    // The user's lock first (the lock order), as every change to a user's requests takes it.
    async deleteAllOf(userId) {
      await inTransaction(db, async (tx) => {
        if (await lockUser(tx, userId)) await tx.delete(table).where(eq(table.userId, userId));
      });
    },
  };
}

/**
 * Counts one wrong code with a conditional increment and deletes the row on the 5th, in one
 * transaction that first locks the request's user (the lock order); a parallel twin waits there,
 * then sees the new count. A request whose user is gone is gone too.
 */
export function recordWrongCodePg(
  db: PgDb,
  rows: CountedPgRequests,
  id: string,
  nowSeconds: number,
  alsoInTransaction: (tx: PgTx, outcome: WrongCodeOutcome) => Promise<void> = async () => {},
): Promise<WrongCodeOutcome> {
  return inTransaction(db, async (tx) => {
    const owner = await lockOwner(tx, rows.table.userId, rows.key, id);
    const outcome = owner === undefined ? 'gone' : await countWrongCode(tx, rows, id, nowSeconds);
    await alsoInTransaction(tx, outcome);
    return outcome;
  });
}

async function countWrongCode(tx: PgTx, rows: CountedPgRequests, id: string, nowSeconds: number): Promise<WrongCodeOutcome> {
  {
    const [counted] = await tx
      .update(rows.table)
      .set({ failedAttempts: sql`${rows.table.failedAttempts} + 1` } as never)
      .where(and(eq(rows.key, id), lt(rows.table.failedAttempts, MAX_WRONG_CODES), isLivePg(rows.table.expiresAt, nowSeconds)))
      .returning({ attempts: rows.table.failedAttempts });
    if (counted === undefined) return 'gone';
    if ((counted.attempts as number) < MAX_WRONG_CODES) return 'counted';
    await tx.delete(rows.table).where(eq(rows.key, id));
    return 'invalidated';
  }
}

const TABLES = {
  password_reset: passwordResetRequests,
  email_update: emailUpdateRequests,
  email_verification: emailVerificationRequests,
  email_sign_in: emailSignInRequests,
  passkey_challenge: challenges,
} as const;

/** Batches by ctid; SKIP LOCKED lets the sweeps of several instances run side by side. */
export function postgresCodeRequestStore(db: PgDb): CodeRequestStore {
  const deleteSql = (kind: RequestKind, nowSeconds: number, limit: number) => {
    const table = TABLES[kind];
    const name = sql.identifier(getTableName(table));
    return sql`delete from ${name} where ctid in (
      select ctid from ${name} where ${sql.identifier(table.expiresAt.name)} <= ${nowSeconds} limit ${limit} for update skip locked)`;
  };
  return {
    async deleteExpired(kind, nowSeconds, limit) {
      const result = (await db.execute(deleteSql(kind, nowSeconds, limit))) as unknown as { count?: number };
      return result.count ?? 0;
    },
  };
}
