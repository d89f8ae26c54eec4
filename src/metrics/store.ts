import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { counters, users as userRows, webhookDeliveries } from '../db/schema';
import { AWAITING_MIGRATION } from '../password-migration/model';

/** What is read at scrape time. */
export interface MetricsStore {
  usersTotal(): Promise<number>;
  /** Outbox rows still to send, and those given up after the retry window. */
  webhookDeliveries(): Promise<{ pending: number; failed: number }>;
  /** Users imported without a hash whose password is not taken over yet (API.md §19). */
  usersAwaitingMigration(): Promise<number>;
}

/**
 * The marker written into the statement, not bound: only then can the planner see that the partial
 * index users_awaiting_password_migration (whose WHERE is the same text) covers the query.
 */
export const awaitingMigrationFilter = sql.raw(`password_hash = '${AWAITING_MIGRATION}'`);

export function sqliteMetricsStore(db: Db): MetricsStore {
  const users = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare();
  const byState = db
    .select({ state: webhookDeliveries.state, n: sql<number>`count(*)` })
    .from(webhookDeliveries)
    .groupBy(webhookDeliveries.state)
    .prepare();
  const awaiting = db.select({ n: sql<number>`count(*)` }).from(userRows).where(awaitingMigrationFilter).prepare();
  return {
    usersAwaitingMigration: async () => awaiting.get()?.n ?? 0,
    usersTotal: async () => users.get()?.value ?? 0,
    async webhookDeliveries() {
      const counts = new Map(byState.all().map((row) => [row.state, row.n]));
      return { pending: counts.get('pending') ?? 0, failed: counts.get('failed') ?? 0 };
    },
  };
}
