import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { totpCredentials, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

export type RedeemOutcome = 'redeemed' | 'code_changed' | 'user_gone';

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface RecoveryCodeStore {
  /** False when the user no longer exists. */
  replace(userId: string, newHash: string, events: EventDraft[]): Promise<boolean>;
  /**
   * Deletes the TOTP credential and swaps in the new hash, but only while the stored hash is still
   * the one the code was verified against: of two requests with the same code, one wins. On
   * 'redeemed' appends `events(removedTotp)`, told whether there was a credential to delete.
   */
  redeem(userId: string, verifiedHash: string, newHash: string, events: (removedTotp: boolean) => EventDraft[]): Promise<RedeemOutcome>;
}

export function sqliteRecoveryCodeStore(db: Db, append: AppendEvents): RecoveryCodeStore {
  return {
    async replace(userId, newHash, events) {
      return db.transaction((tx) => {
        const row = tx.update(users).set({ recoveryCodeHash: newHash }).where(eq(users.id, userId)).returning({ id: users.id }).get();
        if (row !== undefined) append(tx, events);
        return row !== undefined;
      });
    },
    async redeem(userId, verifiedHash, newHash, events) {
      return db.transaction((tx) => {
        const swapped = tx
          .update(users)
          .set({ recoveryCodeHash: newHash })
          .where(and(eq(users.id, userId), eq(users.recoveryCodeHash, verifiedHash)))
          .returning({ id: users.id })
          .get();
        if (swapped === undefined) {
          const exists = tx.select({ id: users.id }).from(users).where(eq(users.id, userId)).get();
          return exists === undefined ? 'user_gone' : 'code_changed';
        }
        const removed = tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId }).get();
        append(tx, events(removed !== undefined));
        return 'redeemed';
      });
    },
  };
}
