import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { writtenUnlessUserGone } from '../db/constraints';
import { totpCredentials } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

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
  save(record: TotpRecord, events: EventDraft[]): Promise<boolean>;
  /** Marks `step` used if it is later than the last used one: of parallel claims of one step, one wins. */
  claimStep(userId: string, step: number): Promise<boolean>;
  /** False when there was none (and then no events are appended). */
  delete(userId: string, events: EventDraft[]): Promise<boolean>;
}

export function sqliteTotpStore(db: Db, append: AppendEvents): TotpStore {
  const keepLaterStepOfSameKey = sql`case when ${totpCredentials.key} = excluded.key
    then max(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  return {
    find: async (userId) => db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get(),
    async save(record, events) {
      const { userId: _, ...replacement } = record;
      return writtenUnlessUserGone(() =>
        db.transaction((tx) => {
          tx.insert(totpCredentials)
            .values(record)
            .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep: keepLaterStepOfSameKey } })
            .run();
          append(tx, events);
        }),
      );
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
    async delete(userId, events) {
      return db.transaction((tx) => {
        const deleted = tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId }).get();
        if (deleted !== undefined) append(tx, events);
        return deleted !== undefined;
      });
    },
  };
}
