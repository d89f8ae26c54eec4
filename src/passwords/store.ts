import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import type { DisabledState } from '../users/model';

/** `gone`: the user no longer exists (deleted while the hash was computed); `refused`: its state refuses the write, nothing changed. */
export type SetOutcome = 'set' | 'gone' | 'refused';

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface PasswordStore {
  /** Sets the password unless `refuses` the user's state, read in the same transaction (a disable answered during the hash, API.md §14). */
  setHash(userId: string, passwordHash: string, events: EventDraft[], refuses: (user: DisabledState) => boolean): Promise<SetOutcome>;
  /**
   * Swaps in `newHash` only while the stored hash is still `checkedHash` (API.md §11, rehash on use):
   * of parallel rehashes of one password, exactly one applies (and appends `events`). False when it did not.
   */
  replaceHash(userId: string, checkedHash: string, newHash: string, events: EventDraft[]): Promise<boolean>;
}

export function sqlitePasswordStore(db: Db, append: AppendEvents): PasswordStore {
  return {
    async setHash(userId, passwordHash, events, refuses) {
      return db.transaction((tx): SetOutcome => {
        const user = tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, userId)).get();
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        tx.update(users).set({ passwordHash }).where(eq(users.id, userId)).run();
        append(tx, events);
        return 'set';
      });
    },
    async replaceHash(userId, checkedHash, newHash, events) {
      return db.transaction((tx) => {
        const row = tx
          .update(users)
          .set({ passwordHash: newHash })
          .where(and(eq(users.id, userId), eq(users.passwordHash, checkedHash)))
          .returning({ id: users.id })
          .get();
        if (row !== undefined) append(tx, events);
        return row !== undefined;
      });
    },
  };
}
