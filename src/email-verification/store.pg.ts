import { and, eq, sql } from 'drizzle-orm';
import { isLivePg, recordWrongCodePg, type CountedPgRequests } from '../code-requests/store.pg';
import type { PgDb } from '../db/pg-client';
import { writtenUnlessUserGone } from '../db/pg-errors';
import { inTransaction, lockUser } from '../db/pg-transaction';
import { emailVerificationRequests as requests, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { EmailVerificationStore } from './store';

/** A flow that proves the user reads their mail marks a stored address verified; with no address the flag stays false. */
const hasEmail = sql<boolean>`${users.email} is not null`;

const counted: CountedPgRequests = { table: requests, key: requests.userId };
const liveFor = (userId: string, nowSeconds: number) => and(eq(requests.userId, userId), isLivePg(requests.expiresAt, nowSeconds));

export function postgresEmailVerificationStore(db: PgDb, append: AppendEventsPg): EmailVerificationStore {
  return {
    findLive: async (userId, nowSeconds) => (await db.select().from(requests).where(liveFor(userId, nowSeconds)))[0],
    async replace(record) {
      const { userId: _, ...fresh } = record;
      return writtenUnlessUserGone(db.insert(requests).values(record).onConflictDoUpdate({ target: requests.userId, set: fresh }));
    },
    deleteLive: async (userId, nowSeconds) =>
      (await db.delete(requests).where(liveFor(userId, nowSeconds)).returning({ userId: requests.userId })).length > 0,
    recordWrongCode: (userId, nowSeconds, events) => recordWrongCodePg(db, counted, userId, nowSeconds, (tx) => append(tx, events)),
    redeem: (checked, nowSeconds, events) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, checked.userId))) return false;
        const claimed = await tx
          .delete(requests)
          .where(and(liveFor(checked.userId, nowSeconds), eq(requests.code, checked.code)))
          .returning({ userId: requests.userId });
        if (claimed.length === 0) return false;
        await tx.update(users).set({ emailVerified: hasEmail }).where(eq(users.id, checked.userId));
        await append(tx, events);
        return true;
      }),
  };
}
