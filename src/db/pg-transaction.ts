import { sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { PgDb, PgTx } from './pg-client';
import { postgresError } from './pg-errors';
import { users } from './pg-schema';

/**
 * The lock order of every PostgreSQL transaction (README, Code map): the user row first, then that
 * user's requests, credentials and passkeys; two users in id order. A transaction that still meets a
 * deadlock (40P01) or a serialization failure (40001) rolled back entirely, so running it again is safe.
 */
const RETRYABLE = new Set(['40P01', '40001']);
export const TRANSACTION_TRIES = 3;

export function isRetryableConflict(error: unknown): boolean {
  return RETRYABLE.has(postgresError(error)?.errno ?? '');
}

/**
 * `db.transaction(work)`, tried up to 3 times when PostgreSQL rolls it back for a deadlock or a
 * serialization failure, with a random pause of 5 to 25 ms times the try so the twins do not meet again.
 * The caller's deadline (pg-deadline.ts) still bounds the whole.
 */
export async function inTransaction<T>(db: PgDb, work: (tx: PgTx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(work);
    } catch (error) {
      if (attempt >= TRANSACTION_TRIES || !isRetryableConflict(error)) throw error;
      await Bun.sleep(attempt * (5 + Math.random() * 20));
    }
  }
}

/**
 * Locks the user's row as the transaction's first lock, in the mode an UPDATE of it takes (FOR NO KEY
 * UPDATE): it waits for every other transaction on this user, yet leaves foreign-key checks (a request
 * or passkey inserted for the user) free to run. False when the user no longer exists.
 */
export async function lockUser(tx: PgTx, userId: string): Promise<boolean> {
  const rows = await tx.select({ id: users.id }).from(users).where(sql`${users.id} = ${userId}`).for('no key update');
  return rows.length > 0;
}

/** Several users' rows, in id order (an address moving between users): two such transactions cannot wait on each other. */
export async function lockUsers(tx: PgTx, userIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(userIds)].sort();
  if (ids.length === 0) return [];
  const rows = (await tx.execute(sql`select id from ${users} where id in ${ids} order by id for no key update`)) as unknown as { id: string }[];
  return rows.map((row) => row.id);
}

/**
 * Locks the user who owns a request, credential or passkey row, knowing only that row's key: one
 * statement that reads the owner without locking the row, then locks the user. False-y when the row is gone.
 */
export async function lockOwner(tx: PgTx, owner: PgColumn, key: PgColumn, value: string): Promise<string | undefined> {
  const rows = (await tx.execute(
    sql`select id from ${users} where id = (select ${owner} from ${owner.table} where ${key} = ${value}) for no key update`,
  )) as unknown as { id: string }[];
  return rows[0]?.id;
}
