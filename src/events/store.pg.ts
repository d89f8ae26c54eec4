import { and, asc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { PgDb, PgTx } from '../db/pg-client';
import { events, webhookDeliveries } from '../db/pg-schema';
import type { EventDraft } from './model';
import type { EventStore } from './store';

/** Appends event drafts inside the caller's PostgreSQL transaction; its last statements. */
export type AppendEventsPg = (tx: PgTx, drafts: readonly EventDraft[]) => Promise<void>;

/** pg_advisory_xact_lock key for appending events: the bytes of "gh-event". Bulk appenders (gatehouse import) take it too. */
export const EVENTS_LOCK_KEY = 0x6768_2d65_7665_6e74n;

/**
 * Identity values are drawn at insert time, not at commit: two transactions could commit ids 8 and 7
 * in that order, and a reader polling `after=7` would never see 7. Every appender takes one
 * transaction-scoped advisory lock first, so transactions that append events commit one after
 * another in the order they drew their ids. Appending is the transaction's last work, so the lock is
 * held only for the insert and the commit, and never while waiting for a row lock.
 */
export function postgresEventAppender(options: { outbox: boolean; onOutboxWrite?: () => void }): AppendEventsPg {
  return async (tx, drafts) => {
    if (drafts.length === 0) return;
    await tx.execute(sql`select pg_advisory_xact_lock(${EVENTS_LOCK_KEY.toString()}::bigint)`);
    const ids = await tx
      .insert(events)
      .values(drafts.map((d) => ({ time: d.time, type: d.type, userId: d.userId, clientIp: d.clientIp })))
      .returning({ id: events.id });
    if (!options.outbox) return;
    await tx.insert(webhookDeliveries).values(ids.map(({ id }) => ({ eventId: id })));
    options.onOutboxWrite?.();
  };
}

export function postgresEventStore(db: PgDb, append: AppendEventsPg): EventStore {
  return {
    async append(drafts) {
      if (drafts.length > 0) await db.transaction((tx) => append(tx, drafts));
    },
    async list(query) {
      const conditions: SQL[] = [gt(events.id, query.after)];
      if (query.userId !== null) conditions.push(eq(events.userId, query.userId));
      if (query.type !== null) conditions.push(eq(events.type, query.type));
      return db.select().from(events).where(and(...conditions)).orderBy(asc(events.id)).limit(query.limit);
    },
    async deleteOlderThan(beforeSeconds, limit) {
      const deleted = await db.execute(sql`delete from ${events} where ${events.id} in (
        select ${events.id} from ${events} where ${events.time} < ${beforeSeconds} order by ${events.time} limit ${limit} for update skip locked)`);
      return (deleted as unknown as { count?: number }).count ?? 0;
    },
  };
}
