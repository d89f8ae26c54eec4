import { describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { openDatabase } from '../src/db/client';
import type { WritePacing } from '../src/db/bulk';
import { openPostgresForTools } from '../src/db/pg-client';
import type { StagedUser, TransferUser } from '../src/transfer/model';
import type { TransferStore } from '../src/transfer/service';
import { sqliteTransferStore } from '../src/transfer/store';
import { postgresTransferStore } from '../src/transfer/store.pg';
import { GENERATED_HASH, GENERATED_TOTP_KEY } from './support/generated-users';
import { postgresForThisFile } from './support/postgres';
import { tempDirsOfThisFile } from './support/server-process';
import { stagedUser } from './support/transfer';

const tempDir = tempDirsOfThisFile();
const pg = await postgresForThisFile('transfer store on PostgreSQL');
/** Tiny transactions (200 lines each, the smallest) without pauses: many of them, quickly. */
const FAST: WritePacing = { quietLockMs: 1, busyLockMs: 1, busyForMs: 0, pauseMs: 0, maxWalFrames: 65_536 };
const LINES = 5_000;
// An ES256 COSE key made once with node:crypto; the checks before staging are not under test here.
const COSE = 'pQECAyYgASFYIKYBDntTBrJhlHwXnyGEGpCSXhT5sAXzOH9a6dS92tAJIlggG6NQa_yzPkH3eRj3l5H4GFtRgBVi6CPKo0D_bccR6W0';
const PASSKEY = { publicKey: COSE, counter: 3, transports: ['internal'], backedUp: false, name: 'Passkey', createdAt: 1, lastUsedAt: null };

const staged = (line: number): StagedUser =>
  stagedUser(line, {
    totpKey: line % 2 === 0 ? GENERATED_TOTP_KEY : null,
    totpLastStep: line % 2 === 0 ? line : null,
    passkeys: line % 100 === 0 ? [{ ...PASSKEY, id: `passkey-${line}`, credentialId: `cred${line}` }] : [],
  });

/** A database with the transfer store under test, and a second connection that writes as a server would. */
interface Opened {
  store: TransferStore;
  /** A query on the other connection; numbers come back as numbers. */
  rows(query: string): Promise<Record<string, unknown>[]>;
  insertOther(id: string, email: string): Promise<void>;
  /** A passkey for `userId` with this credential id, as a server registering it would write. */
  insertPasskey(userId: string, id: string, credentialId: string): Promise<void>;
  close(): Promise<void>;
}

const PASSKEY_COLUMNS = 'id, user_id, credential_id, public_key, counter, transports, backed_up, name, created_at, last_used_at';
const numbers = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v]));

async function openSqlite(): Promise<Opened> {
  const dir = tempDir();
  const db = openDatabase(dir);
  const other = openDatabase(dir);
  return {
    store: sqliteTransferStore(db, FAST),
    rows: async (query) => other.$client.query(query).all() as Record<string, unknown>[],
    insertOther: async (id, email) => void other.$client.query('INSERT INTO users (id, created_at, email, email_verified, password_hash, recovery_code_hash) VALUES (?, 1, ?, 0, ?, ?)').run(id, email, GENERATED_HASH, GENERATED_HASH),
    insertPasskey: async (userId, id, credentialId) =>
      void other.$client.query(`INSERT INTO passkeys (${PASSKEY_COLUMNS}) VALUES (?, ?, ?, ?, 0, '', 0, 'Theirs', 1, NULL)`).run(id, userId, credentialId, COSE),
    close: async () => {
      db.$client.close();
      other.$client.close();
    },
  };
}

async function openPostgres(): Promise<Opened> {
  const { url } = await pg.server().freshDatabase();
  const client = await openPostgresForTools(url, 'test');
  const other = new SQL({ url, max: 1 });
  return {
    store: postgresTransferStore(client),
    rows: async (query) => [...(await other.unsafe(query))].map(numbers),
    insertOther: async (id, email) =>
      void (await other.unsafe('INSERT INTO users (id, created_at, email, email_verified, password_hash, recovery_code_hash) VALUES ($1, 1, $2, false, $3, $3)', [id, email, GENERATED_HASH])),
    insertPasskey: async (userId, id, credentialId) =>
      void (await other.unsafe(`INSERT INTO passkeys (${PASSKEY_COLUMNS}) VALUES ($1, $2, $3, $4, 0, '', false, 'Theirs', 1, NULL)`, [id, userId, credentialId, COSE])),
    close: async () => {
      await client.close();
      await other.close();
    },
  };
}

const ENGINES = [
  { name: 'SQLite', skip: false, open: openSqlite },
  { name: 'PostgreSQL', skip: pg.skip, open: openPostgres },
];

const count = async (db: Opened, table: string) => Number((await db.rows(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const counter = async (db: Opened) => Number((await db.rows("SELECT value FROM counters WHERE name = 'users'"))[0]!.value);
const events = async (db: Opened, type: string) => Number((await db.rows(`SELECT count(*) AS n FROM events WHERE type = '${type}'`))[0]!.n);
/** Users, the user count, TOTP credentials, passkeys. */
const tally = async (db: Opened) => [await count(db, 'users'), await counter(db), await count(db, 'totp_credentials'), await count(db, 'passkeys')];

async function stage(store: TransferStore) {
  const staging = await store.startImport();
  await staging.add(Array.from({ length: LINES }, (_, i) => staged(i + 1)), []);
  await staging.findConflicts();
  return staging;
}

const commitOptions = (mode: 'fail' | 'skip', signal = new AbortController().signal) => ({ mode, now: 42, signal, onProgress: () => {} });

async function allProblems(staging: Awaited<ReturnType<typeof stage>>) {
  const out: string[] = [];
  for await (const batch of staging.problems(10)) for (const p of batch) out.push(`${p.line} ${p.kind} ${p.field}`);
  return out;
}

describe.each(ENGINES)('on $name', ({ skip, open }) => {
  describe.skipIf(skip)('writing staged lines', () => {
    test('writes every line in several short transactions; the user count, TOTP credentials and one user.imported event each follow', async () => {
      const db = await open();
      const staging = await stage(db.store);
      const progress: number[] = [];
      const result = await staging.commit({ ...commitOptions('fail'), onProgress: (n) => progress.push(n) });
      expect(result).toEqual({ written: LINES, conflicts: [], interrupted: false });
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.at(-1)).toBe(LINES);
      expect(await tally(db)).toEqual([LINES, LINES, LINES / 2, LINES / 100]);
      expect(await events(db, 'user.imported')).toBe(LINES);
      // Each its own webhook-id (API.md §12), also when written in bulk.
      const [ids] = await db.rows("SELECT count(DISTINCT webhook_id) AS n FROM events WHERE webhook_id LIKE 'evt_%' AND length(webhook_id) = 36");
      expect(Number(ids!.n)).toBe(LINES);
      expect((await db.rows("SELECT created_at, last_used_step FROM totp_credentials WHERE user_id = 'user-10'")).map(numbers)).toEqual([{ created_at: 42, last_used_step: 10 }]);
      // The count is kept by the database's own means again after the bulk write: a later insert still counts.
      await db.insertOther('later', 'later@example.com');
      expect(await counter(db)).toBe(LINES + 1);
      await staging.close();
      await db.close();
    });

    test("fail: an email another connection takes after the check undoes every earlier transaction, each undone user with a user.deleted event", async () => {
      const db = await open();
      const staging = await stage(db.store);
      await db.insertOther('server-made', 'user4500@example.com');
      const result = await staging.commit(commitOptions('fail'));
      expect(result).toEqual({ written: 0, conflicts: [{ line: 4500, kind: 'taken', field: 'email' }], interrupted: false });
      expect(await tally(db)).toEqual([1, 1, 0, 0]);
      expect(await events(db, 'user.deleted')).toBe(await events(db, 'user.imported'));
      expect(Number((await db.rows('SELECT count(DISTINCT webhook_id) AS n FROM events'))[0]!.n)).toBe(await count(db, 'events'));
      expect(await allProblems(staging)).toEqual(['4500 taken email']);
      await staging.close();
      await db.close();
    });

    test('skip: the same race leaves that line out and writes the rest, with their TOTP credentials', async () => {
      const db = await open();
      const staging = await stage(db.store);
      await db.insertOther('user-3700', 'someone@example.com');
      await db.insertOther('server-made', 'user4500@example.com');
      const result = await staging.commit(commitOptions('skip'));
      expect(result.written).toBe(LINES - 2);
      expect(result.conflicts).toEqual([
        { line: 3700, kind: 'taken', field: 'id' },
        { line: 4500, kind: 'taken', field: 'email' },
      ]);
      expect(await tally(db)).toEqual([LINES, LINES, LINES / 2 - 2, LINES / 100 - 2]); // lines 3700 and 4500 had a passkey each
      expect(await events(db, 'user.imported')).toBe(LINES - 2);
      expect(await allProblems(staging)).toEqual(['3700 taken id', '4500 taken email']);
      await staging.close();
      await db.close();
    });

    test("a credential id a server registers after the check: fail writes nothing, skip leaves out that line's user and names the passkey", async () => {
      for (const mode of ['fail', 'skip'] as const) {
        const db = await open();
        const staging = await stage(db.store);
        await db.insertOther('server-made', 'server@example.com');
        await db.insertPasskey('server-made', 'their-passkey', 'cred4200');
        const result = await staging.commit(commitOptions(mode));
        expect(result.conflicts).toEqual([{ line: 4200, kind: 'taken', field: 'passkeys[0].credential_id' }]);
        if (mode === 'fail') expect([result.written, ...(await tally(db))]).toEqual([0, 1, 1, 0, 1]);
        else expect([result.written, ...(await tally(db))]).toEqual([LINES - 1, LINES, LINES, LINES / 2 - 1, LINES / 100]);
        expect((await db.rows("SELECT count(*) AS n FROM users WHERE id = 'user-4200'"))[0]!.n).toBe(0);
        expect(await allProblems(staging)).toEqual(['4200 taken passkeys[0].credential_id']);
        await staging.close();
        await db.close();
      }
    });

    test('an interruption between transactions: fail takes back what was written, skip keeps it', async () => {
      for (const mode of ['fail', 'skip'] as const) {
        const db = await open();
        const staging = await stage(db.store);
        const stop = new AbortController();
        const result = await staging.commit({ ...commitOptions(mode, stop.signal), onProgress: (n) => n >= 2400 && stop.abort() });
        expect(result.interrupted).toBe(true);
        const [users, counted] = await tally(db);
        if (mode === 'fail') expect([result.written, users, counted]).toEqual([0, 0, 0]);
        else expect([users, counted]).toEqual([result.written, result.written]);
        if (mode === 'skip') expect(result.written).toBeGreaterThanOrEqual(2400);
        await staging.close();
        await db.close();
      }
    });
  });

  describe.skipIf(skip)('export', () => {
    test('reads one snapshot: rows written while it streams are not in it', async () => {
      const db = await open();
      for (let n = 1; n <= 2500; n++) await db.insertOther(`u${String(n).padStart(5, '0')}`, `u${n}@example.com`);
      const { total, batches } = await db.store.exportUsers(1000);
      const seen: TransferUser[] = [];
      for await (const batch of batches) {
        seen.push(...batch);
        await db.insertOther(`z${seen.length}`, `z${seen.length}@example.com`); // another connection writes meanwhile
      }
      expect(total).toBe(2500);
      expect(seen).toHaveLength(2500);
      expect(seen.every((u) => u.id.startsWith('u'))).toBe(true);
      expect(await count(db, 'users')).toBe(2503);
      expect(seen[0]).toEqual({ id: 'u00001', createdAt: 1, email: 'u1@example.com', emailVerified: false, disabled: false, disabledUntil: null, passwordHash: GENERATED_HASH, recoveryCodeHash: GENERATED_HASH, totpKey: null, totpLastStep: null, passkeys: [], apiKeys: [] });
      await db.close();
    });
  });
});

describe('on SQLite, the connection after an import', () => {
  test.each(['imported', 'conflict'] as const)('is as it was (%s): foreign keys enforced, full sync, automatic checkpoints, its page cache', async (outcome) => {
    const dir = tempDir();
    const db = openDatabase(dir);
    const other = openDatabase(dir);
    const staging = await stage(sqliteTransferStore(db, FAST));
    if (outcome === 'conflict') other.$client.query("INSERT INTO users (id, created_at, email, email_verified, password_hash, recovery_code_hash) VALUES ('user-4000', 1, NULL, 0, 'h', 'r')").run();
    const result = await staging.commit(commitOptions('fail'));
    expect(result.written).toBe(outcome === 'conflict' ? 0 : LINES);
    await staging.close();
    const pragma = (name: string) => Object.values(db.$client.query(`PRAGMA ${name}`).get() as object)[0];
    // The cache as openDatabase set it (other's, untouched); the import sets its own for the writing, and a smaller one once another connection commits.
    const opened = Object.values(other.$client.query('PRAGMA cache_size').get() as object)[0];
    expect([pragma('foreign_keys'), pragma('synchronous'), pragma('wal_autocheckpoint'), pragma('cache_size')]).toEqual([1, 2, 1000, opened]);
    expect(db.$client.inTransaction).toBe(false);
    // Enforced again: a TOTP credential for nobody is refused.
    expect(() => db.$client.query("INSERT INTO totp_credentials VALUES ('nobody', 1, 'k', 0)").run()).toThrow(/FOREIGN KEY/);
    db.$client.close();
    other.$client.close();
  });
});
