import { openDatabase } from '../../src/db/client';
import { generateId } from '../../src/security/random';

const BATCH = 50_000;
const SEED_CREATED_AT = 1_767_225_600; // 2026-01-01, one second apart per user

/**
 * Inserts users straight through the database layer (one prepared statement, big transactions),
 * all sharing one precomputed password hash. Returns the ids of the first few rows inserted (of all with `allIds`).
 */
export function seedUsers(dir: string, count: number, passwordHash: string, options: { allIds?: boolean } = {}): { ms: number; sampleIds: string[]; ids: string[] } {
  const started = performance.now();
  const db = openDatabase(dir);
  const sqlite = db.$client;
  const first = (sqlite.query('select count(*) as n from users').get() as { n: number }).n;
  const insert = sqlite.prepare(
    'insert into users (id, created_at, email, email_verified, password_hash, recovery_code_hash) values (?, ?, ?, 0, ?, ?)',
  );
  const sampleIds: string[] = [];
  const ids: string[] = [];
  const insertBatch = sqlite.transaction((from: number, to: number) => {
    for (let n = from; n < to; n++) {
      const id = generateId();
      if (sampleIds.length < 100) sampleIds.push(id);
      if (options.allIds) ids.push(id);
      insert.run(id, SEED_CREATED_AT + n, `user${n}@example.com`, passwordHash, passwordHash);
    }
  });
  for (let from = first; from < first + count; from += BATCH) insertBatch(from, Math.min(from + BATCH, first + count));
  sqlite.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  sqlite.close();
  return { ms: performance.now() - started, sampleIds, ids };
}
