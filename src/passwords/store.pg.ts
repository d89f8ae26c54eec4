import { and, eq } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { inTransaction, lockUser } from '../db/pg-transaction';
import { users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { PasswordStore, SetOutcome } from './store';

export function postgresPasswordStore(db: PgDb, append: AppendEventsPg): PasswordStore {
  return {
    // The user is locked first, so a disable commits wholly before (and is seen) or after.
    setHash: (userId, passwordHash, events, refuses) =>
      inTransaction(db, async (tx): Promise<SetOutcome> => {
        if (!(await lockUser(tx, userId))) return 'gone';
        const [user] = await tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, userId));
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        await tx.update(users).set({ passwordHash }).where(eq(users.id, userId));
        await append(tx, events);
        return 'set';
      }),
    // Each UPDATE of the user row is the transaction's first statement: the user is locked first.
    // The conditional UPDATE takes the row lock: a parallel twin waits, then finds the hash changed.
    replaceHash: (userId, checkedHash, newHash, events) =>
      inTransaction(db, async (tx) => {
        const rows = await tx
          .update(users)
          .set({ passwordHash: newHash })
          .where(and(eq(users.id, userId), eq(users.passwordHash, checkedHash)))
          .returning({ id: users.id });
        if (rows.length > 0) await append(tx, events);
        return rows.length > 0;
      }),
  };
}
