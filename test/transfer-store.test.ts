import { describe, expect, test } from 'bun:test';
import { openDatabase, type Db } from '../src/db/client';
import type { WritePacing } from '../src/db/bulk';
import type { StagedUser, TransferUser } from '../src/transfer/model';
import { sqliteTransferStore } from '../src/transfer/store';
import { GENERATED_HASH, GENERATED_TOTP_KEY } from './support/generated-users';
import { tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
/** Tiny transactions (200 lines each, the smallest) without pauses: many of them, quickly. */
const FAST: WritePacing = { quietLockMs: 1, busyLockMs: 1, busyForMs: 0, pauseMs: 0 };
const LINES = 5_000;

const staged = (line: number): StagedUser => ({
  line,
  id: `user-${line}`,
  createdAt: 1_700_000_000 + line,
  email: `user${line}@example.com`,
  emailVerified: false,
  passwordHash: GENERATED_HASH,
  recoveryCodeHash: GENERATED_HASH,
  totpKey: line % 2 === 0 ? GENERATED_TOTP_KEY : null,
  totpLastStep: line % 2 === 0 ? line : null,
});

const count = (db: Db, table: string) => (db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
const counter = (db: Db) => (db.$client.query("SELECT value FROM counters WHERE name = 'users'").get() as { value: number }).value;
const insertOther = (db: Db, id: string, email: string) =>
  db.$client.query('INSERT INTO users VALUES (?, 1, ?, 0, ?, ?)').run(id, email, GENERATED_HASH, GENERATED_HASH);

async function stage(db: Db) {
  const staging = await sqliteTransferStore(db, FAST).startImport();
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

describe('writing staged lines', () => {
  test('writes every line in many short transactions; the user count and TOTP credentials follow', async () => {
    const db = openDatabase(tempDir());
    const staging = await stage(db);
    const progress: number[] = [];
    const result = await staging.commit({ ...commitOptions('fail'), onProgress: (n) => progress.push(n) });
    expect(result).toEqual({ written: LINES, conflicts: [], interrupted: false });
    expect(progress.length).toBeGreaterThan(3);
    expect(progress.at(-1)).toBe(LINES);
    expect([count(db, 'users'), counter(db), count(db, 'totp_credentials')]).toEqual([LINES, LINES, LINES / 2]);
    expect(db.$client.query("SELECT created_at, last_used_step FROM totp_credentials WHERE user_id = 'user-10'").get()).toEqual({ created_at: 42, last_used_step: 10 });
    // The counter trigger is back after the bulk write: a later insert still counts.
    insertOther(db, 'later', 'later@example.com');
    expect(counter(db)).toBe(LINES + 1);
    await staging.close();
  });

  test("fail: an email another connection takes after the check undoes every earlier transaction", async () => {
    const db = openDatabase(tempDir());
    const staging = await stage(db);
    insertOther(db, 'server-made', 'user4500@example.com');
    const result = await staging.commit(commitOptions('fail'));
    expect(result).toEqual({ written: 0, conflicts: [{ line: 4500, kind: 'taken', field: 'email' }], interrupted: false });
    expect([count(db, 'users'), counter(db), count(db, 'totp_credentials')]).toEqual([1, 1, 0]);
    expect(await allProblems(staging)).toEqual(['4500 taken email']);
    await staging.close();
  });

  test('skip: the same race leaves that line out and writes the rest, with their TOTP credentials', async () => {
    const db = openDatabase(tempDir());
    const staging = await stage(db);
    insertOther(db, 'user-3700', 'someone@example.com');
    insertOther(db, 'server-made', 'user4500@example.com');
    const result = await staging.commit(commitOptions('skip'));
    expect(result.written).toBe(LINES - 2);
    expect(result.conflicts).toEqual([
      { line: 3700, kind: 'taken', field: 'id' },
      { line: 4500, kind: 'taken', field: 'email' },
    ]);
    expect([count(db, 'users'), counter(db), count(db, 'totp_credentials')]).toEqual([LINES, LINES, LINES / 2 - 2]);
    expect(await allProblems(staging)).toEqual(['3700 taken id', '4500 taken email']);
    await staging.close();
  });

  test('an interruption between transactions: fail takes back what was written, skip keeps it', async () => {
    for (const mode of ['fail', 'skip'] as const) {
      const db = openDatabase(tempDir());
      const staging = await stage(db);
      const stop = new AbortController();
      const result = await staging.commit({ ...commitOptions(mode, stop.signal), onProgress: (n) => n >= 2400 && stop.abort() });
      expect(result.interrupted).toBe(true);
      if (mode === 'fail') expect([result.written, count(db, 'users'), counter(db)]).toEqual([0, 0, 0]);
      else expect([count(db, 'users'), counter(db)]).toEqual([result.written, result.written]);
      if (mode === 'skip') expect(result.written).toBeGreaterThanOrEqual(2400);
      await staging.close();
    }
  });
});

describe('export', () => {
  test('reads one snapshot: rows written while it streams are not in it', async () => {
    const dir = tempDir();
    const db = openDatabase(dir);
    for (let n = 1; n <= 2500; n++) insertOther(db, `u${String(n).padStart(5, '0')}`, `u${n}@example.com`);
    const { total, batches } = await sqliteTransferStore(openDatabase(dir)).exportUsers(1000);
    const seen: TransferUser[] = [];
    for await (const batch of batches) {
      seen.push(...batch);
      insertOther(db, `z${seen.length}`, `z${seen.length}@example.com`); // another connection writes meanwhile
    }
    expect(total).toBe(2500);
    expect(seen).toHaveLength(2500);
    expect(seen.every((u) => u.id.startsWith('u'))).toBe(true);
    expect(count(db, 'users')).toBe(2503);
    expect(seen[0]).toEqual({ id: 'u00001', createdAt: 1, email: 'u1@example.com', emailVerified: false, passwordHash: GENERATED_HASH, recoveryCodeHash: GENERATED_HASH, totpKey: null, totpLastStep: null });
  });
});
