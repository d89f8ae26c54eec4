// What this file checks is where transactions are opened, by reading the source: the PostgreSQL
// stores' transactions go through inTransaction (src/db/pg-transaction.ts), which retries deadlocks and
// serialization failures, and every other place that opens one is listed below with its count. The lock
// order itself is held by the two-process contention suites (test/contention*.test.ts).
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SRC = join(import.meta.dir, '..', 'src');
const sources = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
const pgStores = sources.filter((file) => file.endsWith('store.pg.ts'));
const text = (file: string) => readFileSync(join(SRC, file), 'utf8');

/**
 * The transactions opened without inTransaction, by file: a BEGIN sent as SQL (at the start of a
 * string or after a `;`) or Bun SQL's `begin(`. Each has its reason; a new one fails until it is added here.
 */
const RAW_TRANSACTIONS: Record<string, number> = {
  // SQLite: the group commit's and bulk writers' own BEGIN IMMEDIATE (one writer at a time, no row locks to order).
  'db/bulk.ts': 1,
  'db/group-commit.ts': 1,
  // SQLite: the empty-database load's BEGIN EXCLUSIVE, once to take the database alone and once for the load (nobody else has it open).
  'db/bulk-load.ts': 2,
  // SQLite: the user views' read transaction, shared for a turn on a read-only connection (no writes, no locks to order).
  'db/read-snapshot.ts': 1,
  // SQLite: the transfer tool's export snapshot and import chunks.
  'transfer/store.ts': 2,
  // The transfer tool's own reserved connection: its temporary tables live in that session, which
  // drizzle's transaction cannot hold. Its chunks insert new users only (no other user's row is locked)
  // and take the counters row last, as the user-count triggers do.
  'transfer/store.pg.ts': 5,
};
const RAW_BEGIN = /(?:['"`]|;\s*)BEGIN\b|\.begin\(/g;

describe('where transactions are opened', () => {
  test('there are PostgreSQL stores to check', () => {
    expect(pgStores.length).toBeGreaterThan(10);
  });

  test("no PostgreSQL store calls drizzle's db.transaction itself: only inTransaction does", () => {
    const direct = pgStores.filter((file) => /\bdb\.transaction\(/.test(text(file)));
    expect(direct).toEqual([]);
  });

  test('a raw BEGIN or begin() only where listed, as many times as listed', () => {
    const found: Record<string, number> = {};
    for (const file of sources) {
      const count = [...text(file).matchAll(RAW_BEGIN)].length;
      if (count > 0) found[file] = count;
    }
    expect(found).toEqual(RAW_TRANSACTIONS);
  });
});
