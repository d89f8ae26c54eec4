// The PostgreSQL stores' transactions all go through inTransaction (src/db/pg-transaction.ts), which
// retries deadlocks and serialization failures; the lock order itself is held by test/contention.test.ts.
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const SRC = join(import.meta.dir, '..', 'src');
const pgStores = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('store.pg.ts'));

describe('PostgreSQL stores', () => {
  test('there are stores to check', () => {
    expect(pgStores.length).toBeGreaterThan(10);
  });

  test('no store opens a transaction except through inTransaction', () => {
    const direct = pgStores.filter((file) => /\bdb\.transaction\(/.test(readFileSync(join(SRC, file), 'utf8')));
    expect(direct).toEqual([]);
  });
});
