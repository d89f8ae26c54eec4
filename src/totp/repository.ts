import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { isForeignKeyViolation } from '../db/constraints';
import { totpCredentials, users, type TotpCredentialRow } from '../db/schema';

export const findTotpCredential = (db: Db, userId: string): TotpCredentialRow | undefined =>
  db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get();

/**
 * One statement, so a registration replaces the old credential whole: key, creation time and last step.
 * False when the user no longer exists (deleted since the route loaded it).
 */
export function saveTotpCredential(db: Db, row: TotpCredentialRow): boolean {
  const { userId: _, ...replacement } = row;
  // Re-registering the same key must not reopen steps it already accepted (say, with the previous step's code).
  const lastUsedStep = sql`case when ${totpCredentials.key} = excluded.key
    then max(${totpCredentials.lastUsedStep}, excluded.last_used_step) else excluded.last_used_step end`;
  try {
    db.insert(totpCredentials)
      .values(row)
      .onConflictDoUpdate({ target: totpCredentials.userId, set: { ...replacement, lastUsedStep } })
      .run();
    return true;
  } catch (error) {
    if (isForeignKeyViolation(error)) return false;
    throw error;
  }
}

/**
 * Marks `step` as used if it is later than the last used one. A single conditional UPDATE,
 * so of several requests carrying the same code exactly one gets true.
 */
export function claimTotpStep(db: Db, userId: string, step: number): boolean {
  const claimed = db
    .update(totpCredentials)
    .set({ lastUsedStep: step })
    .where(and(eq(totpCredentials.userId, userId), lt(totpCredentials.lastUsedStep, step)))
    .returning({ userId: totpCredentials.userId })
    .get();
  return claimed !== undefined;
}

export function deleteTotpCredential(db: Db, userId: string): boolean {
  const deleted = db.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId }).get();
  return deleted !== undefined;
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
