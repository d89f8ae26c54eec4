import { and, eq, lt, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { isForeignKeyViolation } from '../db/pg-errors';
import { totpCredentials } from '../db/pg-schema';
import type { TotpStore } from './store';

export function postgresTotpStore(db: PgDb): TotpStore {
  const keepLaterStepOfSameKey = sql`case when ${totpCredentials.key} = excluded.key
    then greatest(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  return {
    find: async (userId) => (await db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)))[0],
    async save(record) {
      const { userId: _, ...replacement } = record;
      try {
        await db
          .insert(totpCredentials)
          .values(record)
          .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep: keepLaterStepOfSameKey } });
        return true;
      } catch (error) {
        if (isForeignKeyViolation(error)) return false;
        throw error;
      }
    },
    async claimStep(userId, step) {
      const claimed = await db
        .update(totpCredentials)
        .set({ lastUsedStep: step })
        .where(and(eq(totpCredentials.userId, userId), lt(totpCredentials.lastUsedStep, step)))
        .returning({ userId: totpCredentials.userId });
      return claimed.length > 0;
    },
    async delete(userId) {
      const deleted = await db.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId });
      return deleted.length > 0;
    },
  };
}
