import { and, eq, ne } from 'drizzle-orm';
import { isLivePg, postgresRequestRows, recordWrongCodePg, type CountedPgRequests } from '../code-requests/store.pg';
import type { PgDb } from '../db/pg-client';
import { isUniqueViolation } from '../db/pg-errors';
import { inTransaction, lockUsers } from '../db/pg-transaction';
import { emailSignInRequests, emailUpdateRequests as requests, passwordResetRequests, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { EmailUpdateStore } from './store';

const counted: CountedPgRequests = { table: requests, key: requests.id };
const live = (id: string, nowSeconds: number) => and(eq(requests.id, id), isLivePg(requests.expiresAt, nowSeconds));
const otherHolderOf = (email: string, userId: string) => and(eq(users.email, email), ne(users.id, userId));

export function postgresEmailUpdateStore(db: PgDb, append: AppendEventsPg): EmailUpdateStore {
  return {
    heldByOther: async (email, userId) => (await db.select({ id: users.id }).from(users).where(otherHolderOf(email, userId))).length > 0,
    ...postgresRequestRows(db, requests),
    deleteLive: async (id, nowSeconds) => (await db.delete(requests).where(live(id, nowSeconds)).returning({ id: requests.id })).length > 0,
    recordWrongCode: (id, nowSeconds, events) => recordWrongCodePg(db, counted, id, nowSeconds, (tx) => append(tx, events)),
    /**
     * The address moves to this user and every other user's request for it goes: so the transaction
     * first locks this user and the users holding requests for the address, in id order (the lock
     * order); a parallel redemption for the same address waits there, then finds its request gone.
     * Another transaction may still take the address between the check and the UPDATE (a user created
     * with it); the unique index catches that, and the claim then rolls back with 'taken' committed separately.
     */
    async apply(request, nowSeconds, events) {
      try {
        return await inTransaction(db, async (tx) => {
          const claimants = await tx.selectDistinct({ userId: requests.userId }).from(requests).where(eq(requests.email, request.email));
          await lockUsers(tx, [request.userId, ...claimants.map((row) => row.userId)]);
          const claimed = await tx.delete(requests).where(live(request.id, nowSeconds)).returning({ id: requests.id });
          if (claimed.length === 0) return 'gone';
          const holder = await tx.select({ id: users.id }).from(users).where(otherHolderOf(request.email, request.userId));
          if (holder.length > 0) return 'taken';
          await tx.update(users).set({ email: request.email, emailVerified: true }).where(eq(users.id, request.userId));
          await tx.delete(requests).where(eq(requests.email, request.email));
          await tx.delete(passwordResetRequests).where(eq(passwordResetRequests.userId, request.userId));
          await tx.delete(emailSignInRequests).where(eq(emailSignInRequests.userId, request.userId));
          await append(tx, events);
          return 'updated';
        });
      } catch (error) {
        if (!isUniqueViolation(error, 'users_email_unique')) throw error;
        // The address was taken between the check and the update: invalidate this request as 'taken' does.
        await db.delete(requests).where(eq(requests.id, request.id));
        return 'taken';
      }
    },
  };
}
