import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { totpCredentials, users } from '../db/schema';

export type RedeemOutcome = 'redeemed' | 'code_changed' | 'user_gone';

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface RecoveryCodeStore {
  /** False when the user no longer exists. */
  replace(userId: string, newHash: string): Promise<boolean>;
  /**
   * Deletes the TOTP credential and swaps in the new hash, but only while the stored hash is still
   * the one the code was verified against: of two requests with the same code, one wins.
   */
  redeem(userId: string, verifiedHash: string, newHash: string): Promise<RedeemOutcome>;
}

export function sqliteRecoveryCodeStore(db: Db): RecoveryCodeStore {
  return {
    async replace(userId, newHash) {
      const row = db.update(users).set({ recoveryCodeHash: newHash }).where(eq(users.id, userId)).returning({ id: users.id }).get();
      return row !== undefined;
    },
    async redeem(userId, verifiedHash, newHash) {
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
        tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).run();
        return 'redeemed';
      });
    },
  };
}
