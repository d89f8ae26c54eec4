import { and, asc, eq, gt, lte, sql, type SQL } from 'drizzle-orm';
import type { PgDb, PgTx } from '../db/pg-client';
import { events } from '../db/pg-schema';
import { inTransaction } from '../db/pg-transaction';
import type { EventDraft } from './model';
import type { EventStore } from './store';

/** Appends event drafts inside the caller's PostgreSQL transaction; its last statements. */
export type AppendEventsPg = (tx: PgTx, drafts: readonly EventDraft[]) => Promise<void>;

/**
 * Appenders take no lock: transactions that append events commit side by side, so ids (drawn at
 * insert time) may commit out of order, and the reader (settledHorizon) makes up for it. What the
 * reader needs from every appender: its transaction has its id (xid) before it draws an event id.
 * `pg_current_xact_id()` in the rows the INSERT reads assigns one, and those rows are read before
 * the INSERT evaluates the identity's nextval. The outbox rows go in the same statement.
 */
export function postgresEventAppender(options: { outbox: boolean; onOutboxWrite?: () => void }): AppendEventsPg {
  return async (tx, drafts) => {
    if (drafts.length === 0) return;
    // Bun.SQL sends a string bound as jsonb JSON-encoded once more (a jsonb string); as text it stays the array.
    const rows = JSON.stringify(drafts.map((d, n) => ({ n, time: d.time, type: d.type, user_id: d.userId, client_ip: d.clientIp, actor: d.actor })));
    const insert = sql`insert into ${events} (time, type, user_id, client_ip, actor)
      select time, type, user_id, client_ip, actor
      from jsonb_to_recordset((${rows}::text)::jsonb) as d(n int, time bigint, type text, user_id text, client_ip text, actor text)
      where pg_current_xact_id() is not null order by n
      returning id`;
    if (!options.outbox) {
      await tx.execute(insert);
      return;
    }
    await tx.execute(sql`with inserted as (${insert}) insert into webhook_deliveries (event_id) select id from inserted`);
    options.onOutboxWrite?.();
  };
}

/** How long a reader waits for older transactions to end before answering an empty page (the client reads again). */
const SETTLE_BUDGET_MS = 1000;

/**
 * The highest event id a reader may pass without skipping an event that commits later, or undefined
 * when the transactions it must wait for are still running after SETTLE_BUDGET_MS.
 *
 * Every id up to L (the sequence's last value, read first) was drawn by a transaction that had its
 * xid before it drew, so before this transaction takes its own xid X right after reading L. Once no
 * transaction older than X is running (the snapshot's xmin has reached X), each of those has
 * committed or rolled back, and a statement run afterwards sees every event up to L there will ever be.
 * Comparing each event's own xid with the xmin would not do: a transaction may take its xid early
 * (at its first write) and draw its event id late, after a younger transaction drew a lower one.
 */
async function settledHorizon(tx: PgTx, budgetMs: number): Promise<number | undefined> {
  const [first] = (await tx.execute(sql`select set_config('synchronous_commit', 'off', true),
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass), 0)::text as last,
    pg_current_xact_id()::text as me`)) as unknown as { last: string; me: string }[];
  const deadline = Date.now() + budgetMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
    const [state] = (await tx.execute(sql`select pg_snapshot_xmin(pg_current_snapshot()) >= ${first!.me}::xid8 as settled`)) as unknown as { settled: boolean }[];
    if (state?.settled) return Number(first!.last);
    if (Date.now() + pause > deadline) return undefined;
    await Bun.sleep(pause);
  }
}

/** `settleBudgetMs`: SETTLE_BUDGET_MS unless a test needs a reader that waits as long as it takes. */
export function postgresEventStore(db: PgDb, append: AppendEventsPg, { settleBudgetMs = SETTLE_BUDGET_MS } = {}): EventStore {
  return {
    async append(drafts) {
      if (drafts.length > 0) await inTransaction(db, (tx) => append(tx, drafts));
    },
    list: (query) =>
      inTransaction(db, async (tx) => {
        const horizon = await settledHorizon(tx, settleBudgetMs);
        if (horizon === undefined || horizon <= query.after) return [];
        const conditions: SQL[] = [gt(events.id, query.after), lte(events.id, horizon)];
        if (query.userId !== null) conditions.push(eq(events.userId, query.userId));
        if (query.type !== null) conditions.push(eq(events.type, query.type));
        return tx.select().from(events).where(and(...conditions)).orderBy(asc(events.id)).limit(query.limit);
      }),
    async deleteOlderThan(beforeSeconds, limit) {
      const deleted = await db.execute(sql`delete from ${events} where ${events.id} in (
        select ${events.id} from ${events} where ${events.time} < ${beforeSeconds} order by ${events.time} limit ${limit} for update skip locked)`);
      return (deleted as unknown as { count?: number }).count ?? 0;
    },
  };
}
