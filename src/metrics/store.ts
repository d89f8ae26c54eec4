import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { counters, webhookDeliveries } from '../db/schema';

/** What is read at scrape time. */
export interface MetricsStore {
  usersTotal(): Promise<number>;
  /** Outbox rows still to send, and those given up after the retry window. */
  webhookDeliveries(): Promise<{ pending: number; failed: number }>;
}

export function sqliteMetricsStore(db: Db): MetricsStore {
  const users = db.select({ value: counters.value }).from(counters).where(eq(counters.name, 'users')).prepare();
  const byState = db
    .select({ state: webhookDeliveries.state, n: sql<number>`count(*)` })
    .from(webhookDeliveries)
    .groupBy(webhookDeliveries.state)
    .prepare();
  return {
    usersTotal: async () => users.get()?.value ?? 0,
    async webhookDeliveries() {
      const counts = new Map(byState.all().map((row) => [row.state, row.n]));
      return { pending: counts.get('pending') ?? 0, failed: counts.get('failed') ?? 0 };
    },
  };
}
