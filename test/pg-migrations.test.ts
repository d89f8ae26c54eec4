import { describe, expect, test } from 'bun:test';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SQL } from 'bun';
import { getTableConfig as pgTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { migratePostgres, openPostgres } from '../src/db/pg-client';
import { embeddedPgMigrations, pgMigrationSqlByTag } from '../src/db/pg-migrations';
import * as pgSchema from '../src/db/pg-schema';
import * as sqliteSchema from '../src/db/schema';
import { postgresForThisFile } from './support/postgres';
import { REPO_ROOT, runToExit, tempDirsOfThisFile } from './support/server-process';

const FOLDER = join(REPO_ROOT, 'drizzle/pg');
const journal = JSON.parse(readFileSync(join(FOLDER, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
const tempDir = tempDirsOfThisFile();
const pg = await postgresForThisFile('PostgreSQL migrations');

describe('embedded PostgreSQL migrations', () => {
  test('every journal entry is embedded with the exact text of its SQL file, and every file is in the journal', () => {
    expect(journal.entries.length).toBeGreaterThan(0);
    for (const { tag } of journal.entries) expect(pgMigrationSqlByTag[tag]).toBe(readFileSync(join(FOLDER, `${tag}.sql`), 'utf8'));
    const files = readdirSync(FOLDER).filter((name) => name.endsWith('.sql')).map((name) => name.replace(/\.sql$/, ''));
    expect(files.sort()).toEqual(journal.entries.map((entry) => entry.tag).sort());
    expect(Object.keys(pgMigrationSqlByTag).sort()).toEqual(files.sort());
    expect(embeddedPgMigrations()).toHaveLength(journal.entries.length);
  });

  test('drizzle/pg is up to date with src/db/pg-schema.ts (drizzle-kit finds nothing to generate)', async () => {
    const copy = join(tempDir(), 'pg');
    cpSync(FOLDER, copy, { recursive: true });
    const kit = join(REPO_ROOT, 'node_modules/.bin/drizzle-kit');
    // drizzle-kit prefixes --out with "./", so it must be relative.
    const out = relative(REPO_ROOT, copy);
    const result = await runToExit(['generate', '--dialect', 'postgresql', '--schema', 'src/db/pg-schema.ts', '--out', out], { command: [kit], timeoutMs: 60_000 });
    expect(`${result.stdout}${result.stderr}`).toContain('No schema changes');
    expect(readdirSync(copy).filter((name) => name.endsWith('.sql'))).toHaveLength(journal.entries.length);
  });

  test('the PostgreSQL schema has the tables, columns and indexes of the SQLite one', () => {
    const shape = (config: { name: string; columns: { name: string; notNull: boolean; primary: boolean }[]; indexes: { config: { name?: string; unique: boolean } }[]; foreignKeys: unknown[] }) => ({
      name: config.name,
      columns: config.columns.map((c) => `${c.name}${c.notNull ? ' not null' : ''}${c.primary ? ' primary' : ''}`).sort(),
      indexes: config.indexes.map((i) => `${i.config.name}${i.config.unique ? ' unique' : ''}`).sort(),
      foreignKeys: config.foreignKeys.length,
    });
    const tables = <T>(schema: Record<string, unknown>, isTable: (v: unknown) => v is T) => Object.values(schema).filter(isTable);
    const isPg = (v: unknown): v is PgTable => typeof v === 'object' && v !== null && Symbol.for('drizzle:IsDrizzleTable') in v && 'enableRLS' in v;
    const isSqlite = (v: unknown): v is SQLiteTable => typeof v === 'object' && v !== null && Symbol.for('drizzle:IsDrizzleTable') in v && !('enableRLS' in v);
    const pgShapes = tables(pgSchema, isPg).map((t) => shape(pgTableConfig(t) as never)).sort((a, b) => a.name.localeCompare(b.name));
    const sqliteShapes = tables(sqliteSchema, isSqlite).map((t) => shape(sqliteTableConfig(t) as never)).sort((a, b) => a.name.localeCompare(b.name));
    expect(pgShapes.map((t) => t.name)).toContain('users');
    expect(pgShapes).toEqual(sqliteShapes);
  });
});

describe.skipIf(pg.skip)('applying them', () => {
  const appliedCount = async (url: string) => {
    const client = new SQL({ url, max: 1 });
    const [row] = await client`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
    const counters = await client`SELECT name, value FROM counters`;
    await client.close();
    return { migrations: row.n as number, counters: [...counters] };
  };

  test('processes starting together apply each migration once (advisory lock)', async () => {
    for (let round = 0; round < 3; round++) {
      const { url } = await pg.server().createDatabase();
      const script = join(REPO_ROOT, 'test/support/migrate-postgres.ts');
      const results = await Promise.all(Array.from({ length: 4 }, () => runToExit([url], { command: [process.execPath, script], timeoutMs: 30_000 })));
      expect(results.map((r) => (r.exitCode === 0 ? 0 : r.stderr))).toEqual([0, 0, 0, 0]);
      expect(await appliedCount(url)).toEqual({ migrations: journal.entries.length, counters: [{ name: 'users', value: '0' }] });
    }
  });

  test('pools of one process migrating at once do not race either', async () => {
    const { url } = await pg.server().createDatabase();
    await Promise.all(Array.from({ length: 4 }, () => migratePostgres(url)));
    expect(await appliedCount(url)).toEqual({ migrations: journal.entries.length, counters: [{ name: 'users', value: '0' }] });
  });

  test('opening again is a no-op and keeps the data; the advisory lock is released', async () => {
    const { url } = await pg.server().createDatabase();
    const first = await openPostgres(url);
    await first.insert(pgSchema.users).values({ id: 'kept', createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'r' });
    await first.$client.close();
    const second = await openPostgres(url);
    expect(await second.select({ id: pgSchema.users.id }).from(pgSchema.users)).toEqual([{ id: 'kept' }]);
    expect(await appliedCount(url)).toEqual({ migrations: journal.entries.length, counters: [{ name: 'users', value: '1' }] });
    const [{ n }] = await second.$client`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'`;
    expect(n).toBe(0);
    await second.$client.close();
  });

  test('the users counter follows inserts and deletes, in bulk and in parallel', async () => {
    const db = await openPostgres((await pg.server().freshDatabase()).url, { maxConnections: 8 });
    const count = async () => (await db.select().from(pgSchema.counters))[0]?.value;
    const user = (id: string) => ({ id, createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'r' });
    expect(await count()).toBe(0);
    await db.insert(pgSchema.users).values([user('a'), user('b'), user('c')]);
    expect(await count()).toBe(3);
    await db.insert(pgSchema.users).values([user('a'), user('d')]).onConflictDoNothing();
    expect(await count()).toBe(4);
    await db.$client`DELETE FROM users WHERE id IN ('a', 'b')`;
    await db.$client`DELETE FROM users WHERE id = 'nobody'`;
    expect(await count()).toBe(2);
    // A failed statement changes nothing, the counter included.
    await db.insert(pgSchema.users).values([user('e'), user('c')]).catch(() => undefined);
    expect(await count()).toBe(2);
    await Promise.all(Array.from({ length: 40 }, (_, i) => db.insert(pgSchema.users).values(user(`p${i}`))));
    await Promise.all(Array.from({ length: 10 }, (_, i) => db.$client`DELETE FROM users WHERE id = ${`p${i}`}`));
    const [{ n }] = await db.$client`SELECT count(*)::int AS n FROM users`;
    expect(n).toBe(32);
    expect(await count()).toBe(32);
    await db.$client.close();
  });
});

/** A client of the database at `url` with every migration before `tag`, applied the way migratePostgres applies them. */
async function databaseBefore(url: string, tag: string) {
  const before = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(before).toBeGreaterThan(0);
  const { drizzle } = await import('drizzle-orm/bun-sql');
  const client = new SQL({ url, max: 1 });
  const old = drizzle({ client }) as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): Promise<void> }; session: unknown };
  await old.dialect.migrate(embeddedPgMigrations().slice(0, before), old.session, { migrationsFolder: '' });
  return client;
}

describe.skipIf(pg.skip)('upgrading a database in place', () => {
  test('0005_user_disabled: users of the previous schema keep their data and read as enabled', async () => {
    const { url } = await pg.server().createDatabase();
    const client = await databaseBefore(url, '0005_user_disabled');
    expect(await client`SELECT column_name FROM information_schema.columns WHERE table_name = 'users' AND column_name LIKE 'disabled%'`).toHaveLength(0);
    await client`INSERT INTO users (id, created_at, email, email_verified, password_hash, recovery_code_hash)
      VALUES ('old1', 10, 'a@example.com', true, 'h1', 'r1'), ('old2', 20, null, false, 'h2', 'r2')`;
    await client.close();

    const db = await openPostgres(url);
    expect(await db.select().from(pgSchema.users).orderBy(pgSchema.users.id)).toEqual([
      { id: 'old1', createdAt: 10, email: 'a@example.com', emailVerified: true, passwordHash: 'h1', recoveryCodeHash: 'r1', disabled: false, disabledUntil: null, registeredTotp: false, passkeyCount: 0 },
      { id: 'old2', createdAt: 20, email: null, emailVerified: false, passwordHash: 'h2', recoveryCodeHash: 'r2', disabled: false, disabledUntil: null, registeredTotp: false, passkeyCount: 0 },
    ]);
    expect(await appliedMigrations(url)).toBe(journal.entries.length);
    await db.$client.close();
  });
});

describe.skipIf(pg.skip)('upgrading the user view in place', () => {
  test('0011_user_view_columns: registered_totp and passkey_count are filled in from the rows already there', async () => {
    const { url } = await pg.server().createDatabase();
    const client = await databaseBefore(url, '0011_user_view_columns');
    await client`INSERT INTO users (id, created_at, password_hash, recovery_code_hash) VALUES ('both', 1, 'h', 'r'), ('keys', 2, 'h', 'r'), ('none', 3, 'h', 'r')`;
    await client`INSERT INTO totp_credentials (user_id, created_at, key, last_used_step) VALUES ('both', 1, 'k', 0)`;
    await client`INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, backed_up, name, created_at)
      VALUES ('p1', 'both', 'c1', 'k', 0, '', false, 'a', 1), ('p2', 'keys', 'c2', 'k', 0, '', false, 'a', 1), ('p3', 'keys', 'c3', 'k', 0, '', false, 'a', 1)`;
    await client.close();

    const db = await openPostgres(url);
    const u = pgSchema.users;
    const view = () => db.select({ id: u.id, totp: u.registeredTotp, passkeys: u.passkeyCount }).from(u).orderBy(u.id);
    expect(await view()).toEqual([
      { id: 'both', totp: true, passkeys: 1 },
      { id: 'keys', totp: false, passkeys: 2 },
      { id: 'none', totp: false, passkeys: 0 },
    ]);
    await db.$client`DELETE FROM totp_credentials WHERE user_id = 'both'`;
    await db.$client`DELETE FROM passkeys WHERE id = 'p2'`;
    await db.$client`INSERT INTO totp_credentials (user_id, created_at, key, last_used_step) VALUES ('none', 1, 'k', 0)`;
    expect(await view()).toEqual([
      { id: 'both', totp: false, passkeys: 1 },
      { id: 'keys', totp: false, passkeys: 1 },
      { id: 'none', totp: true, passkeys: 0 },
    ]);
    expect(await appliedMigrations(url)).toBe(journal.entries.length);
    await db.$client.close();
  });
});

describe.skipIf(pg.skip)('upgrading events in place', () => {
  test('0006_event_webhook_id: events of the previous schema keep their ids and get a webhook-id each', async () => {
    const { url } = await pg.server().createDatabase();
    const client = await databaseBefore(url, '0006_event_webhook_id');
    await client`INSERT INTO events (time, type, user_id) VALUES (10, 'user.created', 'u1'), (11, 'user.deleted', 'u1'), (12, 'user.created', 'u2')`;
    await client.close();

    const db = await openPostgres(url);
    const rows = await db.select().from(pgSchema.events).orderBy(pgSchema.events.id);
    expect(rows.map((row) => [row.id, row.type])).toEqual([[1, 'user.created'], [2, 'user.deleted'], [3, 'user.created']]);
    for (const row of rows) expect(row.webhookId).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(new Set(rows.map((row) => row.webhookId)).size).toBe(3);
    await db.$client.close();
  });
});

async function appliedMigrations(url: string): Promise<number> {
  const client = new SQL({ url, max: 1 });
  const [row] = await client`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
  await client.close();
  return row.n as number;
}
