import { and, eq } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { inTransaction } from '../db/pg-transaction';
import { totpCredentials, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { RecoveryCodeStore } from './store';

export function postgresRecoveryCodeStore(db: PgDb, append: AppendEventsPg): RecoveryCodeStore {
  return {
    // Each UPDATE of the user row is the transaction's first statement: the user is locked first.
    replace: (userId, newHash, events) =>
      inTransaction(db, async (tx) => {
        const rows = await tx.update(users).set({ recoveryCodeHash: newHash }).where(eq(users.id, userId)).returning({ id: users.id });
        if (rows.length > 0) await append(tx, events);
        return rows.length > 0;
      }),
    // The conditional UPDATE takes the user's row lock: a parallel twin waits, then finds the hash changed.
    redeem: (userId, verifiedHash, newHash, events) =>
      inTransaction(db, async (tx) => {
        const swapped = await tx
          .update(users)
          .set({ recoveryCodeHash: newHash })
          .where(and(eq(users.id, userId), eq(users.recoveryCodeHash, verifiedHash)))
          .returning({ id: users.id });
        if (swapped.length === 0) {
          const exists = await tx.select({ id: users.id }).from(users).where(eq(users.id, userId));
          return exists.length === 0 ? 'user_gone' : 'code_changed';
        }
        const removed = await tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).returning({ userId: totpCredentials.userId });
        await append(tx, events(removed.length > 0));
        return 'redeemed';
      }),
  };
}
