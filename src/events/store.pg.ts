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
 * xid before it drew, so before the one statement that reads L takes its own xid X. Once no
 * transaction of this database older than X is running, each of those has committed or rolled back,
 * and a statement run afterwards sees every event up to L there will ever be. Only this database's
 * transactions can write its events: an idle transaction in another database of the cluster (which
 * holds back every snapshot's xmin) is not waited for. Each step is one statement on its own, so a
 * waiting reader holds no pooled connection while it waits (createSettler polls for all of them).
 * Comparing each event's own xid with a horizon would not do: a transaction may take its xid early
 * (at its first write) and draw its event id late, after a younger transaction drew a lower one.
 */
async function settledHorizon(db: PgDb, settled: Settler, budgetMs: number): Promise<number | undefined> {
  const [first] = (await db.execute(sql`select set_config('synchronous_commit', 'off', true),
    coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass), 0)::text as last,
    pg_current_xact_id()::xid::text as me`)) as unknown as { last: string; me: string }[];
  return (await settled(first!.me, budgetMs)) ? Number(first!.last) : undefined;
}

/** Resolves true once no transaction of this database older than `xid` runs, false after `budgetMs`. */
type Settler = (xid: string, budgetMs: number) => Promise<boolean>;
const POLL_MS = 10;

/**
 * One poll for every waiting reader of this process, one statement every POLL_MS while any waits: 20
 * readers cost what one does, so waiting readers cannot crowd other requests out of the pool.
 * age() compares transaction ids safely across wraparound; a reader's own xid has committed.
 */
function createSettler(db: PgDb): Settler {
  const waiting = new Map<string, { settle: (settled: boolean) => void; fail: (error: unknown) => void }[]>();
  let polling = false;
  const poll = async () => {
    polling = true;
    try {
      while (waiting.size > 0) {
        const xids = `{${[...waiting.keys()].join(',')}}`;
        const rows = (await db.execute(sql`select x::text as x from unnest(${xids}::xid[]) as x
          where not exists (select 1 from pg_stat_activity where datname = current_database()
            and backend_xid is not null and age(backend_xid) > age(x))`)) as unknown as { x: string }[];
        for (const { x } of rows) {
          for (const waiter of waiting.get(x) ?? []) waiter.settle(true);
          waiting.delete(x);
        }
        if (waiting.size > 0) await Bun.sleep(POLL_MS);
      }
    } catch (error) {
      for (const waiters of waiting.values()) for (const waiter of waiters) waiter.fail(error);
      waiting.clear();
    } finally {
      polling = false;
    }
  };
  return (xid, budgetMs) =>
    new Promise<boolean>((resolve, reject) => {
      const waiter = { settle: (settled: boolean) => (clearTimeout(timer), resolve(settled)), fail: (error: unknown) => (clearTimeout(timer), reject(error)) };
      const timer = setTimeout(() => {
        const rest = (waiting.get(xid) ?? []).filter((other) => other !== waiter);
        if (rest.length > 0) waiting.set(xid, rest);
        else waiting.delete(xid);
        resolve(false);
      }, budgetMs);
      waiting.set(xid, [...(waiting.get(xid) ?? []), waiter]);
      if (!polling) void poll();
    });
}

/** `settleBudgetMs`: SETTLE_BUDGET_MS unless a test needs a reader that waits as long as it takes. */
export function postgresEventStore(db: PgDb, append: AppendEventsPg, { settleBudgetMs = SETTLE_BUDGET_MS } = {}): EventStore {
  const settled = createSettler(db);
  return {
    async append(drafts) {
      if (drafts.length > 0) await inTransaction(db, (tx) => append(tx, drafts));
    },
    async list(query) {
      const horizon = await settledHorizon(db, settled, settleBudgetMs);
      if (horizon === undefined || horizon <= query.after) return [];
      const conditions: SQL[] = [gt(events.id, query.after), lte(events.id, horizon)];
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
