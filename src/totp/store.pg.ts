import { and, eq, lt, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { inTransaction, lockUser } from '../db/pg-transaction';
import { totpCredentials, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { TotpStore } from './store';

export function postgresTotpStore(db: PgDb, append: AppendEventsPg): TotpStore {
  const keepLaterStepOfSameKey = sql`case when ${totpCredentials.key} = excluded.key
    then greatest(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  return {
    find: async (userId) => (await db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)))[0],
    async save(record, events, refuses) {
      const { userId: _, ...replacement } = record;
      return inTransaction(db, async (tx): Promise<'saved' | 'gone' | 'refused'> => {
        if (!(await lockUser(tx, record.userId))) return 'gone';
        const [user] = await tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, record.userId));
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        await tx
          .insert(totpCredentials)
          .values(record)
          .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep: keepLaterStepOfSameKey } });
        await append(tx, events);
        return 'saved';
      });
    },
    // The user first (the lock order): a disable commits wholly before (and is seen) or after.
    claimStep: (userId, step, refuses) =>
      inTransaction(db, async (tx): Promise<'claimed' | 'replayed' | 'refused'> => {
        await lockUser(tx, userId);
        const [user] = await tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, userId));
        if (user !== undefined && refuses(user)) return 'refused';
        const claimed = await tx
          .update(totpCredentials)
          .set({ lastUsedStep: step })
          .where(and(eq(totpCredentials.userId, userId), lt(totpCredentials.lastUsedStep, step)))
          .returning({ userId: totpCredentials.userId });
        return claimed.length > 0 ? 'claimed' : 'replayed';
      }),
    delete: (userId, events) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, userId))) return false;
        const deleted = await tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId });
        if (deleted.length > 0) await append(tx, events);
        return deleted.length > 0;
      }),
  };
}
