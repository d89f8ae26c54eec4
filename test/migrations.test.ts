import { describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client';
import { embeddedMigrations, migrationSqlByTag } from '../src/db/migrations';
import { events, users } from '../src/db/schema';
import { generateId } from '../src/security/random';
import { REPO_ROOT, tempDirsOfThisFile } from './support/server-process';

const DRIZZLE = join(REPO_ROOT, 'drizzle');
const journal = JSON.parse(readFileSync(join(DRIZZLE, 'meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] };
const tempDir = tempDirsOfThisFile();

describe('embedded migrations', () => {
  test('every journal entry is embedded with the exact text of its SQL file', () => {
    expect(journal.entries.length).toBeGreaterThan(0);
    for (const { tag } of journal.entries) {
      expect(migrationSqlByTag[tag]).toBe(readFileSync(join(DRIZZLE, `${tag}.sql`), 'utf8'));
    }
    expect(Object.keys(migrationSqlByTag).sort()).toEqual(journal.entries.map((entry) => entry.tag).sort());
    expect(embeddedMigrations()).toHaveLength(journal.entries.length);
  });

  test('every SQL file in drizzle/ is in the journal', () => {
    const files = readdirSync(DRIZZLE).filter((name) => name.endsWith('.sql'));
    expect(files.map((name) => name.replace(/\.sql$/, '')).sort()).toEqual(journal.entries.map((entry) => entry.tag).sort());
  });

  test('opening a file database again does not re-apply migrations and keeps the data', () => {
    const dir = tempDir();
    const first = openDatabase(dir);
    const id = generateId();
    first.insert(users).values({ id, createdAt: 1, passwordHash: 'h', recoveryCodeHash: 'h' }).run();
    first.$client.close();

    const second = openDatabase(dir);
    const applied = second.$client.query('select count(*) as n from __drizzle_migrations').get() as { n: number };
    expect(applied.n).toBe(journal.entries.length);
    expect(second.select().from(users).all().map((row) => row.id)).toEqual([id]);
    // The user counter is seeded by a migration: applied twice it would be wrong.
    const counter = second.$client.query("select value from counters where name = 'users'").get() as { value: number };
    expect(counter.value).toBe(1);
    second.$client.close();
    const third = openDatabase(dir);
    expect((third.$client.query('select count(*) as n from __drizzle_migrations').get() as { n: number }).n).toBe(journal.entries.length);
    third.$client.close();
  });
});

describe('connection settings', () => {
  test('a file database uses WAL, foreign keys, a 5 s busy timeout and synchronous FULL', () => {
    const dir = tempDir();
    for (let open = 0; open < 2; open++) {
      const db = openDatabase(dir);
      const pragma = (name: string) => Object.values(db.$client.query(`pragma ${name}`).get() as Record<string, unknown>)[0];
      expect(pragma('journal_mode')).toBe('wal');
      expect(pragma('foreign_keys')).toBe(1);
      expect(pragma('busy_timeout')).toBe(5000);
      expect(pragma('synchronous')).toBe(2);
      db.$client.close();
    }
  });

  test('foreign keys are enforced', () => {
    const db = openDatabase(null);
    expect(() => db.$client.run("insert into totp_credentials (user_id, created_at, key, last_used_step) values ('ghost', 1, 'k', 0)")).toThrow(/FOREIGN KEY/);
  });
});

/** A database in `dir` with every migration before `tag`, applied as openDatabase would have applied them. */
async function databaseBefore(dir: string, tag: string) {
  const before = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(before).toBeGreaterThan(0);
  const { Database } = await import('bun:sqlite');
  const { drizzle } = await import('drizzle-orm/bun-sqlite');
  const old = new Database(join(dir, 'gatehouse.db'), { create: true, strict: true });
  const oldDb = drizzle({ client: old }) as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void }; session: unknown };
  oldDb.dialect.migrate(embeddedMigrations().slice(0, before), oldDb.session, { migrationsFolder: '' });
  return old;
}

describe('upgrading a database in place', () => {
  test('0005_user_disabled: users of the previous schema keep their data and read as enabled', async () => {
    const dir = tempDir();
    const old = await databaseBefore(dir, '0005_user_disabled');
    expect(old.query("select name from pragma_table_info('users') where name like 'disabled%'").all()).toEqual([]);
    old.run("insert into users (id, created_at, email, email_verified, password_hash, recovery_code_hash) values ('old1', 10, 'a@example.com', 1, 'h1', 'r1'), ('old2', 20, null, 0, 'h2', 'r2')");
    old.close();

    const db = openDatabase(dir);
    expect(db.select().from(users).orderBy(users.id).all()).toEqual([
      { id: 'old1', createdAt: 10, email: 'a@example.com', emailVerified: true, passwordHash: 'h1', recoveryCodeHash: 'r1', disabled: false, disabledUntil: null, registeredTotp: false, passkeyCount: 0 },
      { id: 'old2', createdAt: 20, email: null, emailVerified: false, passwordHash: 'h2', recoveryCodeHash: 'r2', disabled: false, disabledUntil: null, registeredTotp: false, passkeyCount: 0 },
    ]);
    expect((db.$client.query("select value from counters where name = 'users'").get() as { value: number }).value).toBe(2);
    db.$client.close();
  });

  test('0011_user_view_columns: registered_totp and passkey_count are filled in from the rows already there', async () => {
    const dir = tempDir();
    const old = await databaseBefore(dir, '0011_user_view_columns');
    old.run("insert into users (id, created_at, password_hash, recovery_code_hash) values ('both', 1, 'h', 'r'), ('keys', 2, 'h', 'r'), ('none', 3, 'h', 'r')");
    old.run("insert into totp_credentials (user_id, created_at, key, last_used_step) values ('both', 1, 'k', 0)");
    old.run(`insert into passkeys (id, user_id, credential_id, public_key, counter, transports, backed_up, name, created_at)
      values ('p1', 'both', 'c1', 'k', 0, '', 0, 'a', 1), ('p2', 'keys', 'c2', 'k', 0, '', 0, 'a', 1), ('p3', 'keys', 'c3', 'k', 0, '', 0, 'a', 1)`);
    old.close();

    const db = openDatabase(dir);
    const view = () => db.select({ id: users.id, totp: users.registeredTotp, passkeys: users.passkeyCount }).from(users).orderBy(users.id).all();
    expect(view()).toEqual([
      { id: 'both', totp: true, passkeys: 1 },
      { id: 'keys', totp: false, passkeys: 2 },
      { id: 'none', totp: false, passkeys: 0 },
    ]);
    // And the triggers keep them from here on.
    db.$client.run("delete from totp_credentials where user_id = 'both'");
    db.$client.run("delete from passkeys where id = 'p2'");
    db.$client.run("insert into totp_credentials (user_id, created_at, key, last_used_step) values ('none', 1, 'k', 0)");
    expect(view()).toEqual([
      { id: 'both', totp: false, passkeys: 1 },
      { id: 'keys', totp: false, passkeys: 1 },
      { id: 'none', totp: true, passkeys: 0 },
    ]);
    db.$client.close();
  });

  test('0006_event_webhook_id: events of the previous schema keep their ids and get a webhook-id each; a raw insert gets one too', async () => {
    const dir = tempDir();
    const old = await databaseBefore(dir, '0006_event_webhook_id');
    old.run("insert into events (time, type, user_id) values (10, 'user.created', 'u1'), (11, 'user.deleted', 'u1'), (12, 'user.created', 'u2')");
    old.close();

    const db = openDatabase(dir);
    const rows = db.select().from(events).orderBy(events.id).all();
    expect(rows.map((row) => [row.id, row.type])).toEqual([[1, 'user.created'], [2, 'user.deleted'], [3, 'user.created']]);
    for (const row of rows) expect(row.webhookId).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(new Set(rows.map((row) => row.webhookId)).size).toBe(3);
    db.$client.run("insert into events (time, type) values (13, 'address.blocked')");
    const [raw] = db.select().from(events).where(eq(events.id, 4)).all();
    expect(raw!.webhookId).toMatch(/^evt_[0-9a-f]{32}$/);
    db.$client.close();
  });
});
