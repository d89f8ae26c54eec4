import { eq } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { users } from '../db/pg-schema';
import type { PasswordStore } from './store';

export function postgresPasswordStore(db: PgDb): PasswordStore {
  return {
    async setHash(userId, passwordHash) {
      const rows = await db.update(users).set({ passwordHash }).where(eq(users.id, userId)).returning({ id: users.id });
      return rows.length > 0;
    },
  };
}
