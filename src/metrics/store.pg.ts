import { eq, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { counters, users as userRows, webhookDeliveries } from '../db/pg-schema';
import { awaitingMigrationFilter, type MetricsStore } from './store';

export function postgresMetricsStore(db: PgDb): MetricsStore {
  const users = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare('metrics_users_total');
  const byState = db
    .select({ state: webhookDeliveries.state, n: sql<number>`count(*)::int` })
    .from(webhookDeliveries)
    .groupBy(webhookDeliveries.state)
    .prepare('metrics_webhook_deliveries');
  const awaiting = db.select({ n: sql<number>`count(*)::int` }).from(userRows).where(awaitingMigrationFilter).prepare('metrics_users_awaiting_migration');
  return {
    usersAwaitingMigration: async () => (await awaiting.execute())[0]?.n ?? 0,
    usersTotal: async () => (await users.execute())[0]?.value ?? 0,
    async webhookDeliveries() {
      const counts = new Map((await byState.execute()).map((row) => [row.state, row.n]));
      return { pending: counts.get('pending') ?? 0, failed: counts.get('failed') ?? 0 };
    },
  };
}
