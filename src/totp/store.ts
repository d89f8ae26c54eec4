import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { totpCredentials, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import type { DisabledState } from '../users/model';

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
   * steps, so it cannot reopen a step already accepted. `gone` when the user no longer exists;
   * `refused` (nothing written) when `refuses` the user's state as read in the same transaction (API.md §14).
   */
  save(record: TotpRecord, events: EventDraft[], refuses: (user: DisabledState) => boolean): Promise<'saved' | 'gone' | 'refused'>;
  /**
   * Marks `step` used if it is later than the last used one: of parallel claims of one step, one wins
   * (`replayed` for the others). `refused` (nothing written) when `refuses` the user's state, read in
   * the same transaction (API.md §14).
   */
  claimStep(userId: string, step: number, refuses: (user: DisabledState) => boolean): Promise<'claimed' | 'replayed' | 'refused'>;
  /** False when there was none (and then no events are appended). */
  delete(userId: string, events: EventDraft[]): Promise<boolean>;
}

export function sqliteTotpStore(db: Db, append: AppendEvents): TotpStore {
  const keepLaterStepOfSameKey = sql`case when ${totpCredentials.key} = excluded.key
    then max(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  return {
    find: async (userId) => db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get(),
    async save(record, events, refuses) {
      const { userId: _, ...replacement } = record;
      return db.transaction((tx) => {
        const user = tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, record.userId)).get();
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        tx.insert(totpCredentials)
          .values(record)
          .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep: keepLaterStepOfSameKey } })
          .run();
        append(tx, events);
        return 'saved';
      });
    },
    async claimStep(userId, step, refuses) {
      return db.transaction((tx) => {
        const user = tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, userId)).get();
        if (user !== undefined && refuses(user)) return 'refused';
        const claimed = tx
          .update(totpCredentials)
          .set({ lastUsedStep: step })
          .where(and(eq(totpCredentials.userId, userId), lt(totpCredentials.lastUsedStep, step)))
          .returning({ userId: totpCredentials.userId })
          .get();
        return claimed === undefined ? 'replayed' : 'claimed';
      });
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
