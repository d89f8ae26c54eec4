import { and, eq, lt } from 'drizzle-orm';
import type { Db } from '../db/client';
import { totpCredentials, type TotpCredentialRow } from '../db/schema';

export const findTotpCredential = (db: Db, userId: string): TotpCredentialRow | undefined =>
  db.select().from(totpCredentials).where(eq(totpCredentials.userId, userId)).get();

/**
 * One statement, so a registration replaces the old credential whole: key, creation time and last step.
 * False when the user no longer exists (deleted since the route loaded it).
 */
export function saveTotpCredential(db: Db, row: TotpCredentialRow): boolean {
  const { userId: _, ...replacement } = row;
  try {
    db.insert(totpCredentials).values(row).onConflictDoUpdate({ target: totpCredentials.userId, set: replacement }).run();
    return true;
  } catch (error) {
    if (error instanceof Error && /FOREIGN KEY constraint failed/.test(error.message)) return false;
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
