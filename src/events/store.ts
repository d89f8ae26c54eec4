import { and, asc, eq, gt, type SQL } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { events, webhookDeliveries } from '../db/schema';
import type { EventDraft, EventQuery, StoredEvent } from './model';

/**
 * Appends event drafts inside the caller's transaction, so a change and its events commit together
 * or not at all (API.md §12); with webhooks on, each event's outbox row is written there too.
 * Every store that changes state receives one of these from `sqliteStores`.
 *
 * A reader polling with `after` must never pass an id whose transaction commits later. SQLite has
 * one writer at a time, so an id taken inside a transaction is always larger than every committed
 * one. PostgreSQL draws sequence values at insert time and its appenders commit in parallel: there
 * the reader waits for older transactions to end instead (events/store.pg.ts, settledHorizon).
 */
export type AppendEvents = (tx: Tx, drafts: readonly EventDraft[]) => void;

/** `onOutboxWrite` runs inside the transaction, so it may only schedule work (wake the sender), never read for it. */
export function eventAppender(options: { outbox: boolean; onOutboxWrite?: () => void }): AppendEvents {
  return (tx, drafts) => {
    if (drafts.length === 0) return;
    const ids = tx
      .insert(events)
      .values(drafts.map((d) => ({ time: d.time, type: d.type, userId: d.userId, clientIp: d.clientIp, actor: d.actor })))
      .returning({ id: events.id })
      .all();
    if (!options.outbox) return;
    tx.insert(webhookDeliveries).values(ids.map(({ id }) => ({ eventId: id }))).run();
    options.onOutboxWrite?.();
  };
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface EventStore {
  /**
   * Events with no other state change of their own (a wrong password, an address blocked: the limits
   * live in memory or Redis), in one transaction.
   */
  append(drafts: readonly EventDraft[]): Promise<void>;
  /** Oldest first (by id), at most `limit`, ids above `after`. */
  list(query: EventQuery): Promise<StoredEvent[]>;
  /** Deletes up to `limit` events with `time < beforeSeconds` (and their outbox rows); answers how many. */
  deleteOlderThan(beforeSeconds: number, limit: number): Promise<number>;
}

export function sqliteEventStore(db: Db, append: AppendEvents): EventStore {
  // The subquery walks the time index from its oldest end, so a batch costs the same however large the table.
  const deleteBatch = db.$client.query<never, [number, number]>(
    'delete from events where id in (select id from events where time < ? order by time limit ?)',
  );
  return {
    async append(drafts) {
      if (drafts.length > 0) db.transaction((tx) => append(tx, drafts));
    },
    async list(query) {
      const conditions: SQL[] = [gt(events.id, query.after)];
      if (query.userId !== null) conditions.push(eq(events.userId, query.userId));
      if (query.type !== null) conditions.push(eq(events.type, query.type));
      return db
        .select()
        .from(events)
        .where(and(...conditions))
        .orderBy(asc(events.id))
        .limit(query.limit)
        .all();
    },
    deleteOlderThan: async (beforeSeconds, limit) => deleteBatch.run(beforeSeconds, limit).changes,
  };
}
