import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { totpCredentials, users } from '../../db/schema';

/** Stores a new recovery code hash; false when the user no longer exists. */
export function replaceRecoveryCodeHash(db: Db, userId: string, recoveryCodeHash: string): boolean {
  const changed = db.update(users).set({ recoveryCodeHash }).where(eq(users.id, userId)).returning({ id: users.id }).get();
  return changed !== undefined;
}

/**
 * Deletes the TOTP credential and swaps in the new recovery code hash, but only while the stored hash
 * is still the one the code was verified against: of two requests with the same code, one wins.
 */
export function resetSecondFactors(db: Db, userId: string, verifiedHash: string, newHash: string): boolean {
  return db.transaction((tx) => {
    const swapped = tx
      .update(users)
      .set({ recoveryCodeHash: newHash })
      .where(and(eq(users.id, userId), eq(users.recoveryCodeHash, verifiedHash)))
      .returning({ id: users.id })
      .get();
    if (swapped === undefined) return false;
    tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).run();
    return true;
  });
}
