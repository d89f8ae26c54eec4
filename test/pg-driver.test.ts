// What we rely on from Bun.SQL and drizzle-orm/bun-sql on a real PostgreSQL (notes/pg-redis-findings.md).
import { SQL } from 'bun';
import { beforeAll, describe, expect, test } from 'bun:test';
import { and, DrizzleQueryError, eq, lt, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/bun-sql';
import { openPostgres, type PgDb } from '../src/db/pg-client';
import { isDatabaseUnavailable, isForeignKeyViolation, isUniqueViolation, postgresError } from '../src/db/pg-errors';
import { passwordResetRequests, totpCredentials, users } from '../src/db/pg-schema';
import { postgresForThisFile } from './support/postgres';

const pg = await postgresForThisFile('PostgreSQL driver (Bun.SQL + drizzle-orm/bun-sql)');
let db: PgDb;
let url: string;

const user = (id: string, email: string | null = null) => ({ id, createdAt: 1_700_000_000, email, passwordHash: 'h', recoveryCodeHash: 'r' });
const backendPid = async (q: { execute(query: ReturnType<typeof sql>): Promise<unknown> }) =>
  ((await q.execute(sql`SELECT pg_backend_pid() AS pid`)) as { pid: number }[])[0]!.pid;

beforeAll(async () => {
  if (pg.skip) return;
  url = (await pg.server().freshDatabase()).url;
  db = await openPostgres(url);
}, 30_000);

describe.skipIf(pg.skip)('pool options', () => {
  test('max caps the connections, and connection parameters reach every session', async () => {
    const client = new SQL({ url, max: 3, connection: { application_name: 'pool-test', statement_timeout: 1234 } });
    const rows = await Promise.all(Array.from({ length: 12 }, () => client`SELECT pg_backend_pid() AS pid, current_setting('statement_timeout') AS st, pg_sleep(0.05)`));
    const pids = new Set(rows.map((r) => r[0].pid));
    expect(pids.size).toBeLessThanOrEqual(3);
    expect(rows.every((r) => r[0].st === '1234ms')).toBe(true);
    const [{ n }] = await db.$client`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'pool-test'`;
    expect(n).toBeLessThanOrEqual(3);
    await client.close();
  });

  test('openPostgres sets the statement and idle-in-transaction timeouts', async () => {
    const [row] = await db.$client`SELECT current_setting('statement_timeout') AS st, current_setting('idle_in_transaction_session_timeout') AS it, current_setting('application_name') AS app`;
    expect(row).toEqual({ st: '1500ms', it: '5s', app: 'gatehouse' });
  });

  test('the database in the URL wins over PGDATABASE (which Bun.SQL alone would prefer)', async () => {
    const saved = process.env.PGDATABASE;
    process.env.PGDATABASE = 'postgres';
    try {
      const bare = new SQL({ url, max: 1 });
      expect((await bare`SELECT current_database() AS d`)[0].d).toBe('postgres');
      await bare.close();
      const ours = await openPostgres(url);
      expect((await ours.$client`SELECT current_database() AS d`)[0].d).toBe(new URL(url).pathname.slice(1));
      await ours.$client.close();
    } finally {
      if (saved === undefined) delete process.env.PGDATABASE;
      else process.env.PGDATABASE = saved;
    }
  });

  test('idleTimeout closes idle connections; the next query opens one again', async () => {
    const client = new SQL({ url, max: 2, idleTimeout: 1, connection: { application_name: 'idle-test' } });
    await client`SELECT 1`;
    const sessions = async () => (await db.$client`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'idle-test'`)[0].n;
    expect(await sessions()).toBeGreaterThan(0);
    await Bun.sleep(2500);
    expect(await sessions()).toBe(0);
    expect((await client`SELECT 7 AS x`)[0].x).toBe(7);
    await client.close();
  });
});

describe.skipIf(pg.skip)('constraint violations', () => {
  test('a unique violation is a DrizzleQueryError whose cause is SQL.PostgresError with errno 23505', async () => {
    await db.insert(users).values(user('uniq-1', 'same@example.com'));
    const error = await db.insert(users).values(user('uniq-2', 'same@example.com')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DrizzleQueryError);
    // Its message carries the statement and every parameter: never log it (hashes, codes, keys).
    expect((error as Error).message).toContain('same@example.com');
    const cause = (error as Error).cause;
    expect(cause).toBeInstanceOf(SQL.PostgresError);
    expect(cause).toMatchObject({ code: 'ERR_POSTGRES_SERVER_ERROR', errno: '23505', constraint: 'users_email_unique', table: 'users' });
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(error, 'users_email_unique')).toBe(true);
    expect(isUniqueViolation(error, 'users_pkey')).toBe(false);
    expect(isForeignKeyViolation(error)).toBe(false);
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  test('a duplicate primary key names users_pkey; raw Bun.SQL throws the PostgresError itself', async () => {
    await db.insert(users).values(user('pk-1'));
    const error = await db.$client`INSERT INTO users (id, created_at, password_hash, recovery_code_hash) VALUES ('pk-1', 1, 'h', 'r')`.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SQL.PostgresError);
    expect(isUniqueViolation(error, 'users_pkey')).toBe(true);
  });

  test('a foreign-key violation has errno 23503', async () => {
    const error = await db.insert(totpCredentials).values({ userId: 'ghost', createdAt: 1, key: 'k', lastUsedStep: 0 }).catch((e: unknown) => e);
    expect(postgresError(error)).toMatchObject({ errno: '23503', constraint: 'totp_credentials_user_id_users_id_fk' });
    expect(isForeignKeyViolation(error)).toBe(true);
    expect(isUniqueViolation(error)).toBe(false);
  });
});

describe.skipIf(pg.skip)('types', () => {
  test("bigint columns in mode 'number' come back as numbers; a raw int8 is a string", async () => {
    await db.insert(users).values({ ...user('types-1'), createdAt: 4_102_444_800 }); // 2100-01-01, past int4
    const [row] = await db.select().from(users).where(eq(users.id, 'types-1'));
    expect(row).toMatchObject({ createdAt: 4_102_444_800, emailVerified: false });
    const [raw] = await db.$client`SELECT created_at FROM users WHERE id = 'types-1'`;
    expect(raw.created_at).toBe('4102444800');
  });
});

describe.skipIf(pg.skip)('transactions', () => {
  test('db.transaction runs on one connection, in one transaction, READ COMMITTED by default', async () => {
    const seen = await db.transaction(async (tx) => {
      const a = (await tx.execute(sql`SELECT pg_backend_pid() AS pid, txid_current() AS xid, current_setting('transaction_isolation') AS iso`)) as Record<string, unknown>[];
      const b = (await tx.execute(sql`SELECT pg_backend_pid() AS pid, txid_current() AS xid`)) as Record<string, unknown>[];
      return [a[0]!, b[0]!];
    });
    expect(seen[0]!.pid).toBe(seen[1]!.pid);
    expect(seen[0]!.xid).toBe(seen[1]!.xid);
    expect(seen[0]!.iso).toBe('read committed');
  });

  test('an isolation level can be asked for', async () => {
    const iso = await db.transaction(async (tx) => (await tx.execute(sql`SELECT current_setting('transaction_isolation') AS iso`)) as { iso: string }[], { isolationLevel: 'repeatable read' });
    expect(iso[0]!.iso).toBe('repeatable read');
  });

  test('a throw rolls back every statement of the callback', async () => {
    const error = await db
      .transaction(async (tx) => {
        await tx.insert(users).values(user('rolled-back'));
        throw new Error('stop');
      })
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe('stop');
    expect(await db.select().from(users).where(eq(users.id, 'rolled-back'))).toEqual([]);
  });

  test('SELECT ... FOR UPDATE makes the concurrent twin wait, then read the committed value', async () => {
    await db.insert(users).values(user('locked-1'));
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = db.transaction(async (tx) => {
      await tx.select().from(users).where(eq(users.id, 'locked-1')).for('update');
      events.push('first locked');
      await held;
      await tx.update(users).set({ emailVerified: true }).where(eq(users.id, 'locked-1'));
      events.push('first commits');
    });
    while (!events.includes('first locked')) await Bun.sleep(5);
    const second = db.transaction(async (tx) => {
      const [row] = await tx.select().from(users).where(eq(users.id, 'locked-1')).for('update');
      events.push(`second read ${row?.emailVerified}`);
    });
    await Bun.sleep(200);
    expect(events).toEqual(['first locked']);
    release();
    await Promise.all([first, second]);
    expect(events).toEqual(['first locked', 'first commits', 'second read true']);
  });

  test('FOR UPDATE SKIP LOCKED passes over the row another transaction holds', async () => {
    await db.insert(users).values([user('skip-a'), user('skip-b')]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = false;
    const holder = db.transaction(async (tx) => {
      await tx.select().from(users).where(eq(users.id, 'skip-a')).for('update');
      locked = true;
      await held;
    });
    while (!locked) await Bun.sleep(5);
    const picked = await db.transaction((tx) =>
      tx.select({ id: users.id }).from(users).where(sql`${users.id} IN ('skip-a', 'skip-b')`).orderBy(users.id).limit(1).for('update', { skipLocked: true }),
    );
    expect(picked).toEqual([{ id: 'skip-b' }]);
    release();
    await holder;
  });

  test('a conditional UPDATE ... RETURNING counts parallel wrong codes exactly: never more than the limit', async () => {
    await db.insert(users).values(user('attempts-1'));
    await db.insert(passwordResetRequests).values({ id: 'req-1', userId: 'attempts-1', createdAt: 1, expiresAt: 9_999_999_999, codeHash: 'x' });
    const tries = await Promise.all(
      Array.from({ length: 20 }, () =>
        db
          .update(passwordResetRequests)
          .set({ failedAttempts: sql`${passwordResetRequests.failedAttempts} + 1` })
          .where(and(eq(passwordResetRequests.id, 'req-1'), lt(passwordResetRequests.failedAttempts, 5)))
          .returning({ failedAttempts: passwordResetRequests.failedAttempts }),
      ),
    );
    const counted = tries.filter((rows) => rows.length === 1).map((rows) => rows[0]!.failedAttempts);
    expect(counted.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  test('of parallel single-use redemptions (DELETE ... RETURNING) exactly one gets the row', async () => {
    await db.insert(users).values(user('redeem-1'));
    await db.insert(passwordResetRequests).values({ id: 'req-2', userId: 'redeem-1', createdAt: 1, expiresAt: 9_999_999_999, codeHash: 'x' });
    const results = await Promise.all(Array.from({ length: 10 }, () => db.delete(passwordResetRequests).where(eq(passwordResetRequests.id, 'req-2')).returning()));
    expect(results.filter((rows) => rows.length === 1)).toHaveLength(1);
  });

  test('pg_advisory_xact_lock through drizzle serializes transactions and is released at commit', async () => {
    const key = 4242;
    const order: string[] = [];
    const critical = (name: string) =>
      db.transaction(async (tx) => {
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${key})`);
        order.push(`${name} in`);
        await Bun.sleep(100);
        order.push(`${name} out`);
      });
    await Promise.all([critical('a'), critical('b')]);
    expect(order[1]).toBe(`${order[0]!.split(' ')[0]} out`);
    const [{ n }] = await db.$client`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`;
    expect(n).toBe(0);
    const [held] = (await db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${key})`);
      return db.execute(sql`SELECT pg_try_advisory_xact_lock(${key}) AS got`);
    })) as { got: boolean }[];
    expect(held!.got).toBe(false);
  });
});

describe.skipIf(pg.skip)('prepared statements', () => {
  test('drizzle queries run as named prepared statements, reused on the connection', async () => {
    const client = new SQL({ url, max: 1 });
    const one = drizzle({ client });
    for (let i = 0; i < 3; i++) await one.select({ id: users.id }).from(users).where(eq(users.id, `nobody-${i}`));
    const statements = await client`SELECT name, statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements`;
    const select = statements.find((s: { statement: string }) => s.statement.startsWith('select "id" from "users"'));
    expect(select).toBeDefined();
    expect(Number(select.runs)).toBe(3);
    await client.close();
  });
});
