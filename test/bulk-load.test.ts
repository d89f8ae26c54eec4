import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type Db } from '../src/db/client';
import type { StagedUser } from '../src/transfer/model';
import { sqliteTransferStore } from '../src/transfer/store';
import { GENERATED_HASH, GENERATED_TOTP_KEY, writeGeneratedUsers } from './support/generated-users';
import { cleanEnv, REPO_ROOT, runToExit, SOURCE_COMMAND, tempDirsOfThisFile } from './support/server-process';
import { stagedUser } from './support/transfer';

const tempDir = tempDirsOfThisFile();
const LINES = 210_000; // more than two of the load's ranges, so the progress moves inside its one transaction

const staged = (line: number): StagedUser =>
  stagedUser(line, {
    id: `u${(line * 7919) % 1_000_003}`, // not in line order, as real ids are not
    totpKey: line % 10 === 0 ? GENERATED_TOTP_KEY : null,
    totpLastStep: line % 10 === 0 ? line : null,
  });

async function staging(db: Db) {
  const staging = await sqliteTransferStore(db).startImport();
  for (let from = 1; from <= LINES; from += 30_000) await staging.add(Array.from({ length: 30_000 }, (_, i) => staged(from + i)), []);
  await staging.findConflicts();
  return staging;
}

const schemaOf = (sqlite: Database) => sqlite.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
const one = (sqlite: Database, query: string) => Object.values(sqlite.query(query).get() as object)[0];
/** Whether a new connection, as a server starting would open, can read the database now. */
function readableByAnother(path: string): boolean {
  const another = new Database(path);
  try {
    another.query('SELECT count(*) FROM users').get();
    return true;
  } catch (error) {
    if (String(error).includes('database is locked')) return false;
    throw error;
  } finally {
    another.close();
  }
}

describe('an import into an empty database nobody else has open', () => {
  test("is one transaction nobody else can read: every index built again as it was, the connection and journal as before", async () => {
    const dir = tempDir();
    const db = openDatabase(dir);
    const schema = schemaOf(db.$client);
    const stage = await staging(db);
    const seen: { written: number; readable: boolean }[] = [];
    const onProgress = (written: number) => seen.push({ written, readable: readableByAnother(db.$client.filename) });
    const result = await stage.commit({ mode: 'fail', now: 42, signal: new AbortController().signal, onProgress });
    await stage.close();
    expect(result).toEqual({ written: LINES, conflicts: [], interrupted: false });
    expect(seen.map((s) => s.written)).toEqual([100_000, 200_000, LINES]);
    expect(seen.every((s) => !s.readable)).toBe(true);
    expect(schemaOf(db.$client)).toEqual(schema);
    const sqlite = db.$client;
    expect([one(sqlite, 'PRAGMA journal_mode'), one(sqlite, 'PRAGMA locking_mode'), one(sqlite, 'PRAGMA foreign_keys'), one(sqlite, 'PRAGMA busy_timeout')]).toEqual(['wal', 'normal', 1, 5000]);
    expect(one(sqlite, 'PRAGMA integrity_check')).toBe('ok');
    expect(one(sqlite, "SELECT value FROM counters WHERE name = 'users'")).toBe(LINES);
    expect(one(sqlite, "SELECT count(*) FROM events WHERE type = 'user.imported'")).toBe(LINES);
    expect(one(sqlite, 'SELECT count(*) FROM users WHERE registered_totp = 1')).toBe(LINES / 10);
    // The rebuilt unique index refuses a taken address; a server can open the database again and write.
    const server = openDatabase(dir);
    const add = server.$client.prepare("INSERT INTO users (id, created_at, email, password_hash, recovery_code_hash) VALUES (?, 1, ?, 'h', 'r')");
    expect(() => add.run('new', 'user7@example.com')).toThrow(/UNIQUE/);
    add.run('new', 'new@example.com');
    expect(one(server.$client, "SELECT value FROM counters WHERE name = 'users'")).toBe(LINES + 1);
    server.$client.close();
    sqlite.close();
  }, 60_000);

  test.each(['fail', 'skip'] as const)('interrupted (%s): nothing written, the indexes as they were', async (mode) => {
    const db = openDatabase(tempDir());
    const schema = schemaOf(db.$client);
    const stage = await staging(db);
    const stop = new AbortController();
    const result = await stage.commit({ mode, now: 42, signal: stop.signal, onProgress: () => stop.abort() });
    await stage.close();
    expect(result).toEqual({ written: 0, conflicts: [], interrupted: true });
    expect([one(db.$client, 'SELECT count(*) FROM users'), one(db.$client, 'SELECT count(*) FROM events'), one(db.$client, "SELECT value FROM counters WHERE name = 'users'")]).toEqual([0, 0, 0]);
    expect(schemaOf(db.$client)).toEqual(schema);
    expect(one(db.$client, 'PRAGMA journal_mode')).toBe('wal');
    expect(readableByAnother(db.$client.filename)).toBe(true);
    db.$client.close();
  }, 60_000);

  test.each([
    ['another connection has it open', false],
    ['it holds a user', true],
  ])('not when %s: then in paced transactions, readable between them', async (_name, withUser) => {
    const dir = tempDir();
    const db = openDatabase(dir);
    const other = openDatabase(dir);
    if (withUser) other.$client.query("INSERT INTO users (id, created_at, password_hash, recovery_code_hash) VALUES ('x', 1, 'h', 'r')").run();
    if (withUser) other.$client.close();
    const stage = await staging(db);
    const readable: boolean[] = [];
    const result = await stage.commit({ mode: 'fail', now: 42, signal: new AbortController().signal, onProgress: () => readable.push(readableByAnother(db.$client.filename)) });
    await stage.close();
    expect(result.written).toBe(LINES);
    expect(readable.length).toBeGreaterThan(3);
    expect(readable.every(Boolean)).toBe(true);
    db.$client.close();
    if (!withUser) other.$client.close();
  }, 60_000);
});

test('killed during the load, the import leaves the database as it was: the next opening rolls its journal back', async () => {
  const dir = tempDir();
  const file = join(dir, 'users.ndjson');
  await writeGeneratedUsers(file, { count: 300_000 });
  const db = join(dir, 'gatehouse.db');
  openDatabase(dir).$client.close();
  const look = new Database(db);
  const before = schemaOf(look);
  look.close(); // open, it would keep the import to paced transactions
  const proc = Bun.spawn([...SOURCE_COMMAND, 'import', file, '--dir', dir], { cwd: REPO_ROOT, env: cleanEnv(), stdout: 'ignore', stderr: 'ignore' });
  const started = Date.now();
  while (!existsSync(`${db}-journal`) && proc.exitCode === null && Date.now() - started < 60_000) await Bun.sleep(5);
  expect(existsSync(`${db}-journal`)).toBe(true);
  await Bun.sleep(300); // well into the writing
  proc.kill('SIGKILL');
  await proc.exited;
  const reopened = openDatabase(dir).$client;
  expect(one(reopened, 'PRAGMA integrity_check')).toBe('ok');
  expect([one(reopened, 'SELECT count(*) FROM users'), one(reopened, 'SELECT count(*) FROM events'), one(reopened, 'PRAGMA journal_mode')]).toEqual([0, 0, 'wal']);
  expect(schemaOf(reopened)).toEqual(before);
  reopened.close();
}, 90_000);

test.each(['SIGINT', 'SIGTERM'] as const)('%s during the load of a file: exit 130, nothing imported, the database as it was', async (signal) => {
  const dir = tempDir();
  const file = join(dir, 'users.ndjson');
  await writeGeneratedUsers(file, { count: 300_000 });
  const db = join(dir, 'gatehouse.db');
  openDatabase(dir).$client.close();
  const proc = Bun.spawn([...SOURCE_COMMAND, 'import', file, '--dir', dir], { cwd: REPO_ROOT, env: cleanEnv(), stdout: 'ignore', stderr: 'pipe' });
  const started = Date.now();
  while (!existsSync(`${db}-journal`) && proc.exitCode === null && Date.now() - started < 60_000) await Bun.sleep(5);
  expect(existsSync(`${db}-journal`)).toBe(true);
  await Bun.sleep(300); // well into the writing
  proc.kill(signal);
  const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect({ exitCode, stderr }).toEqual({ exitCode: 130, stderr: expect.stringMatching(/^interrupted: imported nothing \([0-9.]+ s\)\n$/) });
  const reopened = openDatabase(dir).$client;
  expect([one(reopened, 'SELECT count(*) FROM users'), one(reopened, 'SELECT count(*) FROM events'), one(reopened, 'PRAGMA journal_mode')]).toEqual([0, 0, 'wal']);
  expect(existsSync(`${db}-journal`)).toBe(false);
  reopened.close();
}, 90_000);

describe('a file into an empty database is written as it is read', () => {
  const ROWS = 20_000; // several reads of the file, so the first batches are written before the repeat is met
  const LATE = 15_000;
  const store = (dir: string) => sqliteTransferStore(openDatabase(dir));

  test('in one transaction that keeps the schema; a server can open it afterwards', async () => {
    const dir = tempDir();
    const db = openDatabase(dir);
    const schema = schemaOf(db.$client);
    const load = (await sqliteTransferStore(db).startDirectLoad(42))!;
    expect(load.add(Array.from({ length: 30_000 }, (_, i) => staged(i + 1)))).toBe(true);
    expect(readableByAnother(db.$client.filename)).toBe(false);
    expect(load.add(Array.from({ length: 30_000 }, (_, i) => staged(30_001 + i)))).toBe(true);
    expect(load.finish()).toBe(true);
    load.abandon(); // after the commit: nothing to take back
    const sqlite = db.$client;
    expect(schemaOf(sqlite)).toEqual(schema);
    expect([one(sqlite, 'PRAGMA journal_mode'), one(sqlite, 'PRAGMA locking_mode'), one(sqlite, 'PRAGMA busy_timeout')]).toEqual(['wal', 'normal', 5000]);
    expect(one(sqlite, 'PRAGMA integrity_check')).toBe('ok');
    expect(one(sqlite, "SELECT value FROM counters WHERE name = 'users'")).toBe(60_000);
    expect(one(sqlite, "SELECT count(*) FROM events WHERE type = 'user.imported' AND time = 42")).toBe(60_000);
    expect(one(sqlite, 'SELECT count(*) FROM totp_credentials WHERE created_at = 42')).toBe(6_000);
    expect(one(sqlite, 'SELECT count(*) FROM users WHERE registered_totp = 1')).toBe(6_000);
    expect(readableByAnother(sqlite.filename)).toBe(true);
    expect((await sqliteTransferStore(db).startDirectLoad(42)) === null).toBe(true); // it holds users now
    sqlite.close();
  }, 60_000);

  test.each([
    ['id', 'add'],
    ['email', 'finish'],
  ] as const)('a repeated %s ends it (in %s): nothing kept, the schema and connection as before', async (field, endsIn) => {
    const db = openDatabase(tempDir());
    const schema = schemaOf(db.$client);
    const load = (await sqliteTransferStore(db).startDirectLoad(42))!;
    const [first, second] = [staged(1), staged(2)];
    const added = load.add([first, { ...second, [field]: first[field] }]);
    expect(added).toBe(endsIn === 'finish');
    if (added) expect(load.finish()).toBe(false);
    load.abandon();
    expect([one(db.$client, 'SELECT count(*) FROM users'), one(db.$client, 'SELECT count(*) FROM events'), one(db.$client, "SELECT value FROM counters WHERE name = 'users'")]).toEqual([0, 0, 0]);
    expect(schemaOf(db.$client)).toEqual(schema);
    expect([one(db.$client, 'PRAGMA journal_mode'), one(db.$client, 'PRAGMA locking_mode')]).toEqual(['wal', 'normal']);
    expect(readableByAnother(db.$client.filename)).toBe(true);
    db.$client.close();
  });

  test('not when another connection has it open', async () => {
    const dir = tempDir();
    const other = openDatabase(dir);
    expect((await store(dir).startDirectLoad(42)) === null).toBe(true);
    other.$client.close();
  });

  test.each(['fail', 'skip'] as const)('a repeat after the first batches (%s): reported by line as without it, as the staged checks find it', async (mode) => {
    const dir = tempDir();
    const file = join(dir, 'users.ndjson');
    await writeGeneratedUsers(file, { count: ROWS });
    const lines = readFileSync(file, 'utf8').split('\n');
    const { id } = JSON.parse(lines[4]!) as { id: string };
    lines[LATE - 1] = JSON.stringify({ id, email: 'late@example.com', password_hash: GENERATED_HASH });
    lines[LATE] = JSON.stringify({ email: 'user3@example.com', password_hash: GENERATED_HASH });
    writeFileSync(file, lines.join('\n'));
    const result = await runToExit(['import', file, '--dir', dir, '--on-conflict', mode], { timeoutMs: 60_000 });
    expect(result.stderr.split('\n').slice(0, 2)).toEqual([`line ${LATE}: id: already on line 5`, `line ${LATE + 1}: email: already on line 3`]);
    expect(result.exitCode).toBe(mode === 'fail' ? 1 : 0);
    const sqlite = new Database(join(dir, 'gatehouse.db'));
    expect(one(sqlite, 'SELECT count(*) FROM users')).toBe(mode === 'fail' ? 0 : ROWS - 2);
    expect(one(sqlite, 'PRAGMA journal_mode')).toBe('wal');
    sqlite.close();
  }, 90_000);
});
