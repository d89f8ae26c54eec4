// The events reader on PostgreSQL (issue 22): appenders commit in parallel, without a lock, and a
// reader paging with `after` still never passes an id whose transaction commits later.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { openPostgres, type PgDb } from '../src/db/pg-client';
import type { EventDraft } from '../src/events/model';
import { postgresEventAppender, postgresEventStore } from '../src/events/store.pg';
import type { EventStore } from '../src/events/store';
import { postgresForThisFile } from './support/postgres';

const pg = await postgresForThisFile('events reader on PostgreSQL');
let db: PgDb;
let store: EventStore;
const append = postgresEventAppender({ outbox: true });

beforeAll(async () => {
  if (pg.skip) return;
  db = await openPostgres((await pg.server().freshDatabase()).url, { maxConnections: 6 });
  store = postgresEventStore(db, append);
}, 30_000);
afterAll(async () => {
  await db?.$client.close();
});

const event = (userId: string): EventDraft => ({ type: 'user.created', time: 1, userId, clientIp: null, actor: null });
const list = (after = 0) => store.list({ after, limit: 100, userId: null, type: null });
const gate = () => {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
};

/**
 * The case a filter on each event's own transaction id misses: transaction A takes its id first (at
 * an early write) and draws its event id late; B draws the lower event id and commits after A.
 */
async function lateCommit() {
  const aDrew = gate();
  const bHolds = gate();
  const aMayAppend = gate();
  const bDrew = gate();
  const a = db.transaction(async (tx) => {
    await tx.execute(sql`select pg_current_xact_id()`);
    aDrew.open();
    await aMayAppend.opened;
    await append(tx, [event('a')]);
  });
  await aDrew.opened;
  const b = db.transaction(async (tx) => {
    await append(tx, [event('b')]);
    bDrew.open();
    await bHolds.opened;
  });
  await bDrew.opened;
  aMayAppend.open();
  await a;
  return { releaseB: async () => (bHolds.open(), await b) };
}

describe.skipIf(pg.skip)('GET /events on PostgreSQL: late commits', () => {
  test('a reader waits for a lower id still in flight and does not pass it', async () => {
    const before = (await list()).map((e) => e.id);
    const after = before.at(-1) ?? 0;
    const { releaseB } = await lateCommit();
    // B is open past the reader's budget: the reader answers an empty page rather than A's higher id alone.
    const page = await list(after);
    expect(page).toEqual([]);
    await releaseB();
    const settled = await list(after);
    expect(settled.map((e) => e.userId)).toEqual(['b', 'a']);
    expect(settled[0]!.id).toBeLessThan(settled[1]!.id);
  });

  test('a reader that starts while the lower id is in flight returns both once it commits', async () => {
    const after = (await list()).at(-1)?.id ?? 0;
    const { releaseB } = await lateCommit();
    // A reader without the 1 s budget, so a slow machine cannot make it give up; B commits only once
    // the reader is seen waiting for it: the shared settle poll (which asks pg_stat_activity about the
    // readers' xids) has run since the reader started.
    const started = ((await db.execute(sql`select clock_timestamp()::text as started`)) as unknown as { started: string }[])[0]!.started;
    const patient = postgresEventStore(db, append, { settleBudgetMs: 60_000 });
    const reading = patient.list({ after, limit: 100, userId: null, type: null });
    for (let seen = false; !seen; ) {
      const [row] = (await db.execute(sql`select count(*)::int as n from pg_stat_activity
        where query like '%from unnest(%::xid[])%' and query_start >= ${started}::timestamptz and pid <> pg_backend_pid()`)) as unknown as { n: number }[];
      seen = row!.n > 0;
      if (!seen) await Bun.sleep(5);
    }
    await releaseB();
    expect((await reading).map((e) => e.userId)).toEqual(['b', 'a']);
  });

  test('appenders commit in parallel: no lock held between two open appending transactions', async () => {
    const first = gate();
    const held = db.transaction(async (tx) => {
      await append(tx, [event('held')]);
      await first.opened;
    });
    // Under the old advisory lock this append would wait for `held` to commit.
    await db.transaction((tx) => append(tx, [event('free')]));
    first.open();
    await held;
    const count = async (table: string) => ((await db.execute(sql.raw(`select count(*)::int as n from ${table}`))) as unknown as { n: number }[])[0]!.n;
    // At least once: every event has its outbox row.
    expect(await count('webhook_deliveries')).toBe(await count('events'));
  });
});
