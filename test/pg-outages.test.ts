// What queries do when PostgreSQL goes away and comes back (API.md §10: 503 within 2 s, recovery without restart).
// Upper bounds on time are the contract's 2 s, never tighter: a busy machine must not fail a test. What
// shows that something did not wait is the error it ended with (57P01, 57014, a connection refused).
import { SQL } from 'bun';
import { afterEach, beforeAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { openPostgres, type PgDb } from '../src/db/pg-client';
import { withDeadline, withDeadlines } from '../src/db/pg-deadline';
import { DatabaseUnavailableError, isDatabaseUnavailable, postgresError } from '../src/db/pg-errors';
import { users } from '../src/db/pg-schema';
import { postgresForThisFile } from './support/postgres';

const pg = await postgresForThisFile('PostgreSQL outages');
/** API.md §10: with PostgreSQL unreachable, requests answer 503 within 2 s. */
const UNAVAILABLE_WITHIN_MS = 2_000;
let url: string;
let db: PgDb;

/** How long `task` takes to settle, and with what. */
async function timed<T>(task: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await task;
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

beforeAll(async () => {
  if (pg.skip) return;
  url = (await pg.server().freshDatabase()).url;
  db = await openPostgres(url, { connectionTimeoutMs: 500, statementTimeoutMs: 1000 });
  await db.insert(users).values({ id: 'u1', createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'r' });
}, 30_000);

afterEach(async () => {
  if (pg.skip) return;
  pg.server().thaw();
  await pg.server().start();
}, 30_000);

const readUser = () => db.select().from(users).where(eq(users.id, 'u1'));

describe.skipIf(pg.skip)('PostgreSQL stopped', () => {
  test('queries fail at once with ERR_POSTGRES_CONNECTION_REFUSED, and the same pool recovers when it is back', async () => {
    expect(await readUser()).toHaveLength(1);
    await pg.server().stop('fast');
    for (let i = 0; i < 3; i++) {
      const { ms, error } = await timed(readUser());
      expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
      expect(postgresError(error)?.code).toBe('ERR_POSTGRES_CONNECTION_REFUSED');
      expect(isDatabaseUnavailable(error)).toBe(true);
    }
    await pg.server().start();
    expect(await readUser()).toHaveLength(1);
  });

  test('after an immediate (crash-like) stop the pool recovers as well', async () => {
    expect(await readUser()).toHaveLength(1);
    await pg.server().stop('immediate');
    const { error } = await timed(readUser());
    expect(isDatabaseUnavailable(error)).toBe(true);
    await pg.server().start();
    expect(await readUser()).toHaveLength(1);
  });

  test('a query running when the server stops fails with SQLSTATE 57P01 (admin shutdown)', async () => {
    const running = timed(db.execute(sql`SELECT pg_sleep(0.8)`));
    await Bun.sleep(150);
    await pg.server().stop('fast');
    // Cut short, not run to the end of its sleep: only a query the stop ended fails with 57P01.
    const { error } = await running;
    expect(postgresError(error)).toMatchObject({ code: 'ERR_POSTGRES_SERVER_ERROR', errno: '57P01' });
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  test('a transaction cut by the stop leaves nothing behind', async () => {
    const cut = timed(
      db.transaction(async (tx) => {
        await tx.insert(users).values({ id: 'half-done', createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'r' });
        await tx.execute(sql`SELECT pg_sleep(0.8)`);
      }),
    );
    await Bun.sleep(150);
    await pg.server().stop('fast');
    expect(isDatabaseUnavailable((await cut).error)).toBe(true);
    await pg.server().start();
    expect(await db.select().from(users).where(eq(users.id, 'half-done'))).toEqual([]);
  });
});

describe.skipIf(pg.skip)('PostgreSQL slow or hung', () => {
  test('statement_timeout cancels a statement on the server with SQLSTATE 57014; the connection stays usable', async () => {
    const { ms, error } = await timed(db.execute(sql`SELECT pg_sleep(3)`));
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    expect(postgresError(error)?.errno).toBe('57014');
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(await readUser()).toHaveLength(1);
  });

  test('a hung server leaves queries on open connections waiting: only a timer bounds them', async () => {
    expect(await readUser()).toHaveLength(1);
    pg.server().freeze();
    const hung = readUser();
    const { ms, error } = await timed(withDeadline(hung, 700));
    expect(ms).toBeGreaterThanOrEqual(690);
    expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(isDatabaseUnavailable(error)).toBe(true);
    // The abandoned query is still waiting: neither connectionTimeout nor statement_timeout ended it.
    const late = await timed(Promise.race([hung, Bun.sleep(1500).then(() => 'still waiting')]));
    expect(late.value).toBe('still waiting');
    pg.server().thaw();
    // Once the server answers, the abandoned query completes and the pool serves again.
    expect(await hung).toHaveLength(1);
    expect(await readUser()).toHaveLength(1);
  });

  test('a new connection to a hung server fails after connectionTimeout with ERR_POSTGRES_CONNECTION_TIMEOUT', async () => {
    const client = new SQL({ url, max: 1, connectionTimeout: 0.5 });
    pg.server().freeze();
    const { ms, error } = await timed(client`SELECT 1`);
    expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    expect(postgresError(error)?.code).toBe('ERR_POSTGRES_CONNECTION_TIMEOUT');
    expect(isDatabaseUnavailable(error)).toBe(true);
    pg.server().thaw();
    expect((await client`SELECT 1 AS x`)[0].x).toBe(1);
    await client.close();
  });

  test('query.cancel() cannot bound a hung server: the cancel request itself needs a new connection', async () => {
    const client = new SQL({ url, max: 1, connectionTimeout: 5 });
    await client`SELECT 1`;
    pg.server().freeze();
    const query = client`SELECT 1 AS x`.execute();
    query.cancel();
    const outcome = await timed(Promise.race([query.then(() => 'answered', () => 'rejected'), Bun.sleep(1500).then(() => 'still waiting')]));
    expect(outcome.value).toBe('still waiting');
    pg.server().thaw();
    await query.catch(() => undefined);
    await client.close();
  });

  test('withDeadlines bounds every method of a store', async () => {
    const store = { read: () => readUser(), name: 'store' };
    const bounded = withDeadlines(store, 600);
    expect(bounded.name).toBe('store');
    expect(await bounded.read()).toHaveLength(1);
    pg.server().freeze();
    const { ms, error } = await timed(bounded.read());
    expect(ms).toBeLessThan(UNAVAILABLE_WITHIN_MS);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
  });

  test('idle_in_transaction_session_timeout ends a session stuck inside a transaction, releasing its row locks', async () => {
    const stuck = new SQL({ url, max: 1, connection: { idle_in_transaction_session_timeout: 500 } });
    const reserved = await stuck.reserve();
    await reserved`BEGIN`;
    await reserved`SELECT * FROM users WHERE id = 'u1' FOR UPDATE`;
    // Like an instance frozen mid-transaction: the lock is held until the server ends the session.
    const { ms, value } = await timed(db.transaction((tx) => tx.select().from(users).where(eq(users.id, 'u1')).for('update')));
    // Granted while this test still held the lock open: the server's timeout released it, not release() below.
    expect(value).toHaveLength(1);
    expect(ms).toBeGreaterThan(300);
    reserved.release();
    await stuck.close({ timeout: 0 });
  });
});
