import { and, eq } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { inTransaction } from '../db/pg-transaction';
import { users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { PasswordStore } from './store';

export function postgresPasswordStore(db: PgDb, append: AppendEventsPg): PasswordStore {
  return {
    // Each UPDATE of the user row is the transaction's first statement: the user is locked first.
    setHash: (userId, passwordHash, events) =>
      inTransaction(db, async (tx) => {
        const rows = await tx.update(users).set({ passwordHash }).where(eq(users.id, userId)).returning({ id: users.id });
        if (rows.length > 0) await append(tx, events);
        return rows.length > 0;
      }),
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
