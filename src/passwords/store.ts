import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface PasswordStore {
  /** False when the user no longer exists (deleted while the hash was computed). */
  setHash(userId: string, passwordHash: string, events: EventDraft[]): Promise<boolean>;
  /**
   * Swaps in `newHash` only while the stored hash is still `checkedHash` (API.md §11, rehash on use):
   * of parallel rehashes of one password, exactly one applies (and appends `events`). False when it did not.
   */
  replaceHash(userId: string, checkedHash: string, newHash: string, events: EventDraft[]): Promise<boolean>;
}

export function sqlitePasswordStore(db: Db, append: AppendEvents): PasswordStore {
  return {
    async setHash(userId, passwordHash, events) {
      return db.transaction((tx) => {
        const row = tx.update(users).set({ passwordHash }).where(eq(users.id, userId)).returning({ id: users.id }).get();
        if (row !== undefined) append(tx, events);
        return row !== undefined;
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
