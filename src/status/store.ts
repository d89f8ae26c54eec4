import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';

export interface StatusStore {
  /** Resolves once the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
}

export function sqliteStatusStore(db: Db): StatusStore {
  return {
    async ping() {
      db.get(sql`select 1`);
    },
  };
}
