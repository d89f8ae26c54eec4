import { describe, expect, test } from 'bun:test';
import { openDatabase, type Db } from '../src/db/client';
import { startSweeper, sweepExpired as sweepStore, type SweepOptions } from '../src/code-requests/service';
import { SWEEP_BATCH_SIZE } from '../src/sweeps/batch-sweeper';
import { sqliteCodeRequestStore } from '../src/code-requests/store';
import { createHarness, type Harness } from './support/harness';
import { execute, insertRows } from './support/rows';

const START_MS = Date.UTC(2026, 0, 1);
const NOW_S = START_MS / 1000;

function insertUser(db: Db, id: string): void {
  db.$client
    .query("insert into users (id, created_at, email_verified, password_hash, recovery_code_hash) values (?, ?, 0, 'x', 'x')")
    .run(id, NOW_S);
}

/** Inserts `count` password reset requests of one user expiring at `expiresAt`, in one transaction. */
function insertResetRequests(db: Db, userId: string, expiresAt: number, count: number, prefix = 'r'): void {
  const insert = db.$client.query(
    "insert into password_reset_requests (id, user_id, created_at, expires_at, code_hash) values (?, ?, ?, ?, 'h')",
  );
  db.$client.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`${prefix}${expiresAt}-${i}`, userId, expiresAt - 600, expiresAt);
  })();
}

function insertEmailRequests(db: Db, userId: string, expiresAt: number): void {
  db.$client
    .query("insert into email_verification_requests (user_id, created_at, expires_at, code) values (?, ?, ?, 'ABCDEFGH')")
    .run(userId, expiresAt - 600, expiresAt);
  db.$client
    .query("insert into email_update_requests (id, user_id, created_at, expires_at, email, code) values (?, ?, ?, ?, 'n@example.com', 'ABCDEFGH')")
    .run(`u-${userId}`, userId, expiresAt - 600, expiresAt);
  db.$client
    .query("insert into email_sign_in_requests (id, user_id, created_at, expires_at, email, code_hash) values (?, ?, ?, ?, 'n@example.com', 'h')")
    .run(`s-${userId}`, userId, expiresAt - 600, expiresAt);
}

const countOf = (db: Db, table: string): number =>
  (db.$client.query(`select count(*) as n from ${table}`).get() as { n: number }).n;

const waitUntil = async (condition: () => boolean, timeoutMs = 2000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await Bun.sleep(2);
  }
};

/** The same as insertResetRequests, on the harness's database (SQLite or PostgreSQL). */
const insertResetRequestsOf = (h: Harness, userId: string, expiresAt: number, count: number, prefix = 'r') =>
  insertRows(h, 'passwordResetRequests', Array.from({ length: count }, (_, i) => ({ id: `${prefix}${expiresAt}-${i}`, userId, createdAt: expiresAt - 600, expiresAt, codeHash: 'h' })));
const resetRequestsOf = async (h: Harness): Promise<number> => Number((await execute(h, 'select count(*) as n from password_reset_requests'))[0]!.n);

const waitFor = async (condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await Bun.sleep(2);
  }
};

const sweepExpired = (db: Db, nowMs: number, options?: SweepOptions) => sweepStore(sqliteCodeRequestStore(db), nowMs, options);
const sweeperOf = (h: ReturnType<typeof createHarness>, intervalMs: number) =>
  startSweeper({ store: h.stores.codeRequests, clock: h.deps.clock, log: h.deps.log }, intervalMs);

/** One turn of the event loop, the same step the sweeper takes between batches. */
const nextTick = () => new Promise((resolve) => setImmediate(resolve));

describe('sweepExpired', () => {
  test('deletes rows with expires_at <= now from all four request tables and keeps live ones', async () => {
    const db = openDatabase(null);
    for (const id of ['expired', 'boundary', 'live']) insertUser(db, id);
    insertEmailRequests(db, 'expired', NOW_S - 1);
    insertEmailRequests(db, 'boundary', NOW_S);
    insertEmailRequests(db, 'live', NOW_S + 1);
    insertResetRequests(db, 'expired', NOW_S - 1, 3);
    insertResetRequests(db, 'boundary', NOW_S, 2);
    insertResetRequests(db, 'live', NOW_S + 1, 4);

    expect(await sweepExpired(db, START_MS)).toBe(5 + 2 * 3);
    expect(countOf(db, 'password_reset_requests')).toBe(4);
    expect(countOf(db, 'email_verification_requests')).toBe(1);
    expect(countOf(db, 'email_update_requests')).toBe(1);
    expect(countOf(db, 'email_sign_in_requests')).toBe(1);
    const left = db.$client.query('select distinct user_id from password_reset_requests').all() as { user_id: string }[];
    expect(left).toEqual([{ user_id: 'live' }]);
    expect(await sweepExpired(db, START_MS)).toBe(0);
    expect(await sweepExpired(db, START_MS + 1000)).toBe(7); // the rest expire a second later
  });

  test('works in batches: maxBatches bounds one call, and the next call continues', async () => {
    const db = openDatabase(null);
    insertUser(db, 'u');
    insertResetRequests(db, 'u', NOW_S - 1, 2 * SWEEP_BATCH_SIZE + 200);
    expect(await sweepExpired(db, START_MS, { maxBatches: 1 })).toBe(SWEEP_BATCH_SIZE);
    expect(countOf(db, 'password_reset_requests')).toBe(SWEEP_BATCH_SIZE + 200);
    expect(await sweepExpired(db, START_MS, { batchSize: 50, maxBatches: 3 })).toBe(150);
    expect(await sweepExpired(db, START_MS)).toBe(SWEEP_BATCH_SIZE + 50);
    expect(countOf(db, 'password_reset_requests')).toBe(0);
  });
});

describe('concurrent sweeps on one database (API.md §10: safe to run in every instance at once)', () => {
  test('10 parallel sweeps, alternating between the instances: the deleted counts add up to every expired row, no error', async () => {
    const h = createHarness({ startMs: START_MS });
    const user = await h.createUser();
    const total = 10 * SWEEP_BATCH_SIZE + 123;
    await insertResetRequestsOf(h, user.id, NOW_S - 1, total);
    await insertResetRequestsOf(h, user.id, NOW_S + 60, 7, 'live');
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) => sweepStore(h.instances[n % h.instances.length]!.stores.codeRequests, START_MS)),
    );
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const deleted = results.map((result) => (result as PromiseFulfilledResult<number>).value);
    expect(deleted.reduce((sum, n) => sum + n, 0)).toBe(total);
    expect(await resetRequestsOf(h)).toBe(7);
  }, 60_000);
});

describe('startSweeper', () => {
  test('sweeps periodically until stopped, and the API is unaffected for live requests', async () => {
    const h = createHarness({ startMs: START_MS });
    const user = await h.createUser();
    const live = (await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} })).json;
    await insertResetRequestsOf(h, user.id, NOW_S, 1, 'first');
    const sweeps = () => h.logs.filter((line) => line.message === 'swept expired requests').length;
    const sweeper = sweeperOf(h, 10);
    try {
      await waitFor(() => sweeps() === 1);
      expect(await resetRequestsOf(h)).toBe(1);
      // A run logs when it has finished, so this row can only go in a later run.
      await insertResetRequestsOf(h, user.id, NOW_S, 1, 'second');
      await waitFor(() => sweeps() === 2);
      expect(await resetRequestsOf(h)).toBe(1);
      expect((await h.call('GET', `/password-reset-requests/${live.id}`)).status).toBe(200);
    } finally {
      await sweeper.stop();
    }
    await insertResetRequestsOf(h, user.id, NOW_S, 1, 'after-stop');
    await Bun.sleep(60);
    expect(await resetRequestsOf(h)).toBe(2);
  });

  test('logs errors and keeps going instead of throwing', async () => {
    const db = openDatabase(null);
    db.$client.close();
    const logs: Record<string, unknown>[] = [];
    const sweeper = startSweeper({ store: sqliteCodeRequestStore(db), clock: () => START_MS, log: (line) => logs.push(line) }, 5);
    try {
      await waitUntil(() => logs.filter((line) => line.level === 'error').length >= 2);
    } finally {
      sweeper.stop();
    }
    expect(logs[0]).toMatchObject({ level: 'error', message: 'sweep of expired requests failed' });
  });

  test('requests are served while a large sweep runs, which deletes in batches', async () => {
    const h = createHarness({ startMs: START_MS });
    const user = await h.createUser();
    const total = 60 * SWEEP_BATCH_SIZE;
    await insertResetRequestsOf(h, user.id, NOW_S - 1, total);
    const expired = () => resetRequestsOf(h);
    const seen = new Set<number>();
    let createdId = '';

    const sweeper = sweeperOf(h, 1);
    try {
      while ((await expired()) === total) await nextTick();
      const [read, created] = await Promise.all([
        h.call('GET', `/users/${user.id}`),
        h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} }),
      ]);
      expect(read.status).toBe(200);
      expect(created.status).toBe(200);
      createdId = created.json.id;
      // The sweep was still under way when both requests had been answered.
      expect(await expired()).toBeGreaterThan(1);
      // Minus the live request just created.
      for (let left = (await expired()) - 1; left > 0; left = (await expired()) - 1) {
        seen.add(left);
        await nextTick();
      }
      await waitFor(() => h.logs.some((line) => line.message === 'swept expired requests'));
    } finally {
      sweeper.stop();
    }
    expect(seen.size).toBeGreaterThan(5);
    for (const remaining of seen) expect((total - remaining) % SWEEP_BATCH_SIZE).toBe(0);
    expect(h.logs.find((line) => line.message === 'swept expired requests')).toMatchObject({ deleted: total });
    expect((await h.call('GET', `/password-reset-requests/${createdId}`)).status).toBe(200);
  });
});
