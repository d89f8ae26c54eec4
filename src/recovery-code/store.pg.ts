import { and, eq } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { totpCredentials, users } from '../db/pg-schema';
import type { RecoveryCodeStore } from './store';

export function postgresRecoveryCodeStore(db: PgDb): RecoveryCodeStore {
  return {
    async replace(userId, newHash) {
      const rows = await db.update(users).set({ recoveryCodeHash: newHash }).where(eq(users.id, userId)).returning({ id: users.id });
      return rows.length > 0;
    },
    // The conditional UPDATE takes the user's row lock: a parallel twin waits, then finds the hash changed.
    redeem: (userId, verifiedHash, newHash) =>
      db.transaction(async (tx) => {
        const swapped = await tx
          .update(users)
          .set({ recoveryCodeHash: newHash })
          .where(and(eq(users.id, userId), eq(users.recoveryCodeHash, verifiedHash)))
          .returning({ id: users.id });
        if (swapped.length === 0) {
          const exists = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId));
          return exists.length === 0 ? 'user_gone' : 'code_changed';
        }
        await tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId));
        return 'redeemed';
      }),
  };
}
