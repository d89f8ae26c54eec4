import { and, asc, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { hasEmail } from '../db/email-verified';
import { isLive } from '../db/request-lifetime';
import { passwordResetRequests as resets, users, type PasswordResetRequestRow } from '../db/schema';
import { recordWrongCode, type AttemptCountedRows, type WrongCodeOutcome } from '../security/code-attempts';

const resetCounter: AttemptCountedRows = { table: resets, key: resets.id };

const live = (nowSeconds: number) => isLive(resets.expiresAt, nowSeconds);

/** Every state change is one statement or one synchronous transaction (API.md §1, Atomicity). */
export function resetRequestQueries(db: Db) {
  return {
    insert(row: typeof resets.$inferInsert): void {
      db.insert(resets).values(row).run();
    },

    findLive(id: string, nowSeconds: number): PasswordResetRequestRow | undefined {
      return db.select().from(resets).where(and(eq(resets.id, id), live(nowSeconds))).get();
    },

    listLive(userId: string, nowSeconds: number): PasswordResetRequestRow[] {
      return db
        .select()
        .from(resets)
        .where(and(eq(resets.userId, userId), live(nowSeconds)))
        .orderBy(asc(resets.createdAt), asc(resets.id))
        .all();
    },

    deleteOne(id: string): void {
      db.delete(resets).where(eq(resets.id, id)).run();
    },

    deleteAllOfUser(userId: string): void {
      db.delete(resets).where(eq(resets.userId, userId)).run();
    },

    /** False when the request vanished (invalidated, expired) since it was loaded. */
    markVerified(id: string, nowSeconds: number): boolean {
      const row = db
        .update(resets)
        .set({ emailVerified: true })
        .where(and(eq(resets.id, id), live(nowSeconds)))
        .returning({ id: resets.id })
        .get();
      return row !== undefined;
    },

    recordFailedAttempt(id: string, nowSeconds: number): WrongCodeOutcome {
      return recordWrongCode(db, resetCounter, id, nowSeconds);
    },

    /**
     * Consumes the request and sets the password in one transaction, so of any number of parallel
     * redemptions exactly one finds the request still there. False when it was already gone.
     */
    redeem(id: string, nowSeconds: number, passwordHash: string): boolean {
      return db.transaction((tx) => {
        const request = tx
          .delete(resets)
          .where(and(eq(resets.id, id), live(nowSeconds)))
          .returning({ userId: resets.userId })
          .get();
        if (request === undefined) return false;
        tx.update(users).set({ passwordHash, emailVerified: hasEmail }).where(eq(users.id, request.userId)).run();
        tx.delete(resets).where(eq(resets.userId, request.userId)).run();
        return true;
      });
    },
  };
}
export type ResetRequestQueries = ReturnType<typeof resetRequestQueries>;
