import { sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import type { StatusStore } from './store';

export function postgresStatusStore(db: PgDb): StatusStore {
  return {
    async ping() {
      await db.execute(sql`select 1`);
    },
  };
}
