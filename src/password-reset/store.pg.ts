import { and, asc, eq, sql } from 'drizzle-orm';
import { isLivePg, recordWrongCodePg, type CountedPgRequests } from '../code-requests/store.pg';
import type { PgDb } from '../db/pg-client';
import { isForeignKeyViolation } from '../db/pg-errors';
import { passwordResetRequests as resets, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { PasswordResetStore } from './store';

/** A flow that proves the user reads their mail marks a stored address verified; with no address the flag stays false. */
const hasEmail = sql<boolean>`${users.email} is not null`;

const counted: CountedPgRequests = { table: resets, key: resets.id };
const live = (nowSeconds: number) => isLivePg(resets.expiresAt, nowSeconds);

export function postgresPasswordResetStore(db: PgDb, append: AppendEventsPg): PasswordResetStore {
  return {
    async insert(record) {
      try {
        await db.insert(resets).values(record);
        return true;
      } catch (error) {
        if (isForeignKeyViolation(error)) return false;
        throw error;
      }
    },
    findLive: async (id, nowSeconds) => (await db.select().from(resets).where(and(eq(resets.id, id), live(nowSeconds))))[0],
    listLive: (userId, nowSeconds) =>
      db.select().from(resets).where(and(eq(resets.userId, userId), live(nowSeconds))).orderBy(asc(resets.createdAt), asc(resets.id)),
    async delete(id) {
      await db.delete(resets).where(eq(resets.id, id));
    },
    async deleteAllOf(userId) {
      await db.delete(resets).where(eq(resets.userId, userId));
    },
    async markVerified(id, nowSeconds) {
      const rows = await db.update(resets).set({ emailVerified: true }).where(and(eq(resets.id, id), live(nowSeconds))).returning({ id: resets.id });
      return rows.length > 0;
    },
    recordWrongCode: (id, nowSeconds) => recordWrongCodePg(db, counted, id, nowSeconds),
    // The DELETE … RETURNING claims the row: a parallel twin waits on it, then finds nothing to delete.
    redeem: (id, nowSeconds, passwordHash, events) =>
      db.transaction(async (tx) => {
        const [request] = await tx.delete(resets).where(and(eq(resets.id, id), live(nowSeconds))).returning({ userId: resets.userId });
        if (request === undefined) return false;
        await tx.update(users).set({ passwordHash, emailVerified: hasEmail }).where(eq(users.id, request.userId));
        await tx.delete(resets).where(eq(resets.userId, request.userId));
        await append(tx, events);
        return true;
      }),
  };
}
