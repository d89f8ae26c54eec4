import { describe, expect, test } from 'bun:test';
import { copyFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { GENERATED_HASH, writeGeneratedUsers } from './support/generated-users';
import { postgresForThisFile } from './support/postgres';
import { runToExit, type ServerProcess, startServer, tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
const pg = await postgresForThisFile('import, export beside servers on PostgreSQL');
const SEEDED = 100_000;
/** The import test needs users to write to, not a big database. */
const SEEDED_FOR_IMPORT = 10_000;
/** Several ranges, so writes meet the pauses between them; how long writes wait is `bun run bench`'s. */
const IMPORTED = 10_000;

/** Users with known ids, so the load can write to them; `where` is `--dir D` or `--database-url URL`. */
async function seed(dir: string, users = SEEDED, where = ['--dir', dir]) {
  const file = join(tempDir(), 'seed.ndjson');
  let text = '';
  for (let n = 1; n <= users; n++) text += `{"id":"seed-${n}","email":"seed${n}@example.com","password_hash":"${GENERATED_HASH}"}\n`;
  writeFileSync(file, text);
  expect((await runToExit(['import', file, ...where], { timeoutMs: 60_000 })).exitCode).toBe(0);
}

interface Write {
  /** What the backup must then hold: a user id, or the user id of an email verification request. */
  kind: 'user' | 'request';
  id: string;
  status: number;
  ackedAt: number;
}

/**
 * Writes as fast as 8 clients get answers: new users (an imported hash, so only the recovery code
 * is hashed) and email verification requests for seeded users (no hashing at all).
 */
function writeLoad(server: ServerProcess, seeded = SEEDED, emailTag = '') {
  const writes: Write[] = [];
  let running = true;
  let next = 0;
  const client = async (n: number) => {
    while (running) {
      const i = next++;
      if (n % 2 === 0) {
        const res = await server.request('POST', '/users', { password_hash: GENERATED_HASH, email: `load${emailTag}${i}@example.com` });
        const body = (await res.json()) as { id?: string };
        writes.push({ kind: 'user', id: body.id ?? '', status: res.status, ackedAt: performance.now() });
      } else {
        const id = `seed-${(i % seeded) + 1}`;
        const res = await server.request('POST', `/users/${id}/email-verification-request`);
        await res.arrayBuffer();
        writes.push({ kind: 'request', id, status: res.status, ackedAt: performance.now() });
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, n) => client(n));
  return {
    writes,
    async stop() {
      running = false;
      await Promise.all(clients);
      return writes;
    },
  };
}

describe('while the server runs and takes writes', () => {
  test('backup is a valid database holding every write acknowledged before it started; restoring it works', async () => {
    const dir = tempDir();
    await seed(dir);
    const server = await startServer({ dir });
    const load = writeLoad(server);
    // Some users acknowledged before the backup starts, however slowly a busy machine takes them.
    while (load.writes.filter((w) => w.kind === 'user' && w.status === 200).length <= 5) await Bun.sleep(50);
    const startedAt = performance.now();
    const acked = load.writes.filter((w) => w.status === 200);
    const file = join(tempDir(), 'backup.db');
    const backup = await runToExit(['backup', file, '--dir', dir], { timeoutMs: 60_000 });
    await Bun.sleep(300);
    const writes = await load.stop();
    expect(backup.exitCode).toBe(0);
    expect(backup.stderr).toMatch(/^backed up .*gatehouse\.db to .*backup\.db \([0-9.]+ MB\) in [0-9.]+ s\n$/);
    expect(writes.filter((w) => w.status !== 200)).toEqual([]);
    expect(writes.filter((w) => w.ackedAt > startedAt).length).toBeGreaterThan(0); // writes went on during the backup
    expect(acked.filter((w) => w.kind === 'user').length).toBeGreaterThan(5);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const copy = new Database(file, { readonly: true });
    expect(copy.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
    const userIds = new Set((copy.query('SELECT id FROM users').all() as { id: string }[]).map((row) => row.id));
    const requested = new Set((copy.query('SELECT user_id FROM email_verification_requests').all() as { user_id: string }[]).map((row) => row.user_id));
    expect(acked.filter((w) => w.kind === 'user' && !userIds.has(w.id))).toEqual([]);
    expect(acked.filter((w) => w.kind === 'request' && !requested.has(w.id))).toEqual([]);
    expect(copy.query("SELECT value FROM counters WHERE name = 'users'").get()).toEqual({ value: userIds.size });
    copy.close();

    // Restore as docs/operating.md says: stop the server, remove the WAL files, put the backup in place.
    await server.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `gatehouse.db${suffix}`), { force: true });
    copyFileSync(file, join(dir, 'gatehouse.db'));
    const restored = await startServer({ dir });
    const lastAcked = acked.filter((w) => w.kind === 'user').at(-1)!;
    expect((await restored.request('GET', `/users/${lastAcked.id}`)).status).toBe(200);
    await restored.stop();
  }, 120_000);

  test("import: every server write succeeds meanwhile (none runs into SQLite's 5 s busy timeout); counts add up", async () => {
    const dir = tempDir();
    await seed(dir, SEEDED_FOR_IMPORT);
    const file = join(tempDir(), 'more.ndjson');
    await writeGeneratedUsers(file, { count: IMPORTED, totpEvery: 3 });
    const server = await startServer({ dir });
    const load = writeLoad(server, SEEDED_FOR_IMPORT);
    await Bun.sleep(500);
    const imported = await runToExit(['import', file, '--dir', dir], { timeoutMs: 120_000 });
    const writes = await load.stop();
    await server.stop();
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toMatch(new RegExp(`^imported ${IMPORTED} users in [0-9.]+ s\n$`));
    expect(writes.filter((w) => w.status !== 200)).toEqual([]);
    expect(writes.length).toBeGreaterThan(0);
    const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    const total = SEEDED_FOR_IMPORT + IMPORTED + writes.filter((w) => w.kind === 'user').length;
    expect(db.query('SELECT count(*) AS n FROM users').get()).toEqual({ n: total });
    expect(db.query("SELECT value FROM counters WHERE name = 'users'").get()).toEqual({ value: total });
    db.close();
  }, 120_000);
});

describe.skipIf(pg.skip)('on PostgreSQL while two instances serve it', () => {
  const SECRET = 'transfer-live-secret-0123';

  test('import: every write of either instance succeeds meanwhile; counts and user.imported events add up', async () => {
    const { url } = await pg.server().freshDatabase();
    const where = ['--database-url', url];
    await seed(tempDir(), SEEDED_FOR_IMPORT, where);
    const file = join(tempDir(), 'more.ndjson');
    await writeGeneratedUsers(file, { count: IMPORTED, totpEvery: 3 });
    const servers = await Promise.all([0, 1].map(() => startServer({ dir: tempDir(), extraArgs: ['--secret', SECRET, ...where] })));
    const loads = servers.map((server, n) => writeLoad(server, SEEDED_FOR_IMPORT, `-${n}-`));
    await Bun.sleep(500);
    const imported = await runToExit(['import', file, ...where], { timeoutMs: 120_000 });
    const writes = (await Promise.all(loads.map((load) => load.stop()))).flat();
    await Promise.all(servers.map((server) => server.stop()));
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toMatch(new RegExp(`^imported ${IMPORTED} users in [0-9.]+ s\n$`));
    expect(writes.filter((w) => w.status !== 200)).toEqual([]);
    expect(writes.length).toBeGreaterThan(0);
    const sql = new SQL({ url, max: 1 });
    const one = async (query: string) => Number([...(await sql.unsafe(query))][0].n);
    const total = SEEDED_FOR_IMPORT + IMPORTED + writes.filter((w) => w.kind === 'user').length;
    expect(await one('SELECT count(*) AS n FROM users')).toBe(total);
    expect(await one("SELECT value AS n FROM counters WHERE name = 'users'")).toBe(total);
    expect(await one("SELECT count(*) AS n FROM events WHERE type = 'user.imported'")).toBe(SEEDED_FOR_IMPORT + IMPORTED);
    expect(await one('SELECT count(*) AS n FROM totp_credentials')).toBe(Math.floor(IMPORTED / 3)); // every third generated line has a TOTP key
    await sql.close();
  }, 180_000);

  test('SQLite → PostgreSQL → SQLite: each export is the same bytes; GATEHOUSE_DATABASE_URL works; backup refuses a URL', async () => {
    const dir = tempDir();
    const file = join(tempDir(), 'users.ndjson');
    await writeGeneratedUsers(file, { count: 3_000, totpEvery: 4 });
    expect((await runToExit(['import', file, '--dir', dir], { timeoutMs: 60_000 })).exitCode).toBe(0);
    const fromSqlite = join(tempDir(), 'sqlite.ndjson');
    expect((await runToExit(['export', fromSqlite, '--dir', dir], { timeoutMs: 60_000 })).exitCode).toBe(0);

    const { url } = await pg.server().createDatabase(); // empty: import brings the schema up first
    const env = { GATEHOUSE_DATABASE_URL: url };
    const intoPg = await runToExit(['import', fromSqlite], { env, timeoutMs: 60_000 });
    expect(intoPg).toMatchObject({ exitCode: 0, stderr: expect.stringMatching(/^imported 3000 users in [0-9.]+ s\n$/) });
    const fromPg = join(tempDir(), 'pg.ndjson');
    const exported = await runToExit(['export', fromPg], { env, timeoutMs: 60_000 });
    expect(exported.stderr).toMatch(/^exported 3000 users to .*pg\.ndjson in [0-9.]+ s\n$/);
    expect(readFileSync(fromPg).equals(readFileSync(fromSqlite))).toBe(true);
    expect(statSync(fromPg).mode & 0o777).toBe(0o600);

    const again = tempDir();
    expect((await runToExit(['import', fromPg, '--dir', again], { timeoutMs: 60_000 })).exitCode).toBe(0);
    const back = join(tempDir(), 'back.ndjson');
    expect((await runToExit(['export', back, '--dir', again], { timeoutMs: 60_000 })).exitCode).toBe(0);
    expect(readFileSync(back).equals(readFileSync(fromSqlite))).toBe(true);

    // Importing the same file again: every line's id is taken, nothing changes.
    const twice = await runToExit(['import', fromSqlite, '--database-url', url], { timeoutMs: 60_000 });
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toContain('line 1: id: an existing user has this id');
    const backup = await runToExit(['backup', join(tempDir(), 'b.db')], { env });
    expect(backup).toMatchObject({ exitCode: 2, stderr: 'gatehouse: backup copies the SQLite database only; back up PostgreSQL with its own tools (pg_dump)\n' });
  }, 180_000);

  test('an unreachable database: export fails within seconds with exit 1, and never prints the password', async () => {
    const started = performance.now();
    const result = await runToExit(['export', '--database-url', 'postgres://gatehouse:hunter2-secret@127.0.0.1:1/gatehouse'], { timeoutMs: 30_000 });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toStartWith('gatehouse: export failed: ');
    expect(result.stderr + result.stdout).not.toContain('hunter2');
    expect(performance.now() - started).toBeLessThan(15_000);
  }, 30_000);
});

