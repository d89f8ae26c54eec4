import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { isForeignKeyViolation } from '../db/constraints';
import { totpCredentials } from '../db/schema';

export interface TotpRecord {
  userId: string;
  createdAt: number;
  /** Standard padded base64 of the 20-byte key. */
  key: string;
  /** The last time step a code was accepted for. */
  lastUsedStep: number;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface TotpStore {
  find(userId: string): Promise<TotpRecord | undefined>;
  /**
   * Replaces the user's credential whole; re-registering the same key keeps the later of the two
   * steps, so it cannot reopen a step already accepted. False when the user no longer exists.
   */
  save(record: TotpRecord): Promise<boolean>;
  /** Marks `step` used if it is later than the last used one: of parallel claims of one step, one wins. */
  claimStep(userId: string, step: number): Promise<boolean>;
  /** False when there was none. */
  delete(userId: string): Promise<boolean>;
}

export function sqliteTotpStore(db: Db): TotpStore {
  const keepLaterStepOfSameKey = sql`case when ${totpCredentials.key} = excluded.key
    then max(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  return {
    find: async (userId) => db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get(),
    async save(record) {
      const { userId: _, ...replacement } = record;
      try {
        db.insert(totpCredentials)
          .values(record)
          .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep: keepLaterStepOfSameKey } })
          .run();
        return true;
      } catch (error) {
        if (isForeignKeyViolation(error)) return false;
        throw error;
      }
    },
    async claimStep(userId, step) {
      const claimed = db
        .update(totpCredentials)
        .set({ lastUsedStep: step })
        .where(and(eq(totpCredentials.userId, userId), lt(totpCredentials.lastUsedStep, step)))
        .returning({ userId: totpCredentials.userId })
        .get();
      return claimed !== undefined;
    },
    async delete(userId) {
      const deleted = db.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId }).get();
      return deleted !== undefined;
    },
  };
}
