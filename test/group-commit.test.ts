import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { join } from 'node:path';
import { openDatabase } from '../src/db/client';
import { groupCommit } from '../src/db/group-commit';
import { tempDirsOfThisFile } from './support/server-process';

/** db/group-commit.ts: units of one turn share a transaction, each atomic on its own, answered after the commit. */
const tempDir = tempDirsOfThisFile();

function fileDatabase() {
  const dir = tempDir();
  const db = openDatabase(dir);
  db.$client.run('create table items (id integer primary key, v text not null unique)');
  const other = new Database(join(dir, 'gatehouse.db'), { readonly: true });
  const walFrames = () => (db.$client.query('pragma wal_checkpoint(PASSIVE)').get() as { log: number }).log;
  return { client: db.$client, other, walFrames };
}

describe('group commit', () => {
  test('units queued in one turn run in order, each seeing the ones before, in one commit', async () => {
    const { client, walFrames } = fileDatabase();
    const commit = groupCommit(client);
    const insert = client.prepare('insert into items (v) values (?)');
    const count = client.prepare('select count(*) as n from items');
    const before = walFrames();
    const seen = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        commit(() => {
          insert.run(`v${i}`);
          return (count.get() as { n: number }).n;
        }),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const grouped = walFrames() - before;
    // The same inserts committed one by one write at least a frame each.
    for (let i = 0; i < 100; i++) insert.run(`w${i}`);
    const separate = walFrames() - before - grouped;
    expect(grouped).toBeLessThan(5);
    expect(separate).toBeGreaterThanOrEqual(100);
  });

  test('a unit that throws is undone alone and rejects only its caller', async () => {
    const { client } = fileDatabase();
    const commit = groupCommit(client);
    const insert = client.prepare('insert into items (v) values (?)');
    const results = await Promise.allSettled([
      commit(() => insert.run('a')),
      commit(() => {
        insert.run('b');
        insert.run('a'); // unique violation after a write of its own: both are undone
      }),
      commit(() => insert.run('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(client.query('select v from items order by id').all()).toEqual([{ v: 'a' }, { v: 'c' }]);
  });

  test('callers are answered only once the batch is committed and visible to other connections', async () => {
    const { client, other } = fileDatabase();
    const commit = groupCommit(client);
    const visible = await commit(() => client.run("insert into items (v) values ('x')")).then(
      () => (other.query('select count(*) as n from items').get() as { n: number }).n,
    );
    expect(visible).toBe(1);
    expect(client.inTransaction).toBe(false);
  });

  test('units of later turns form later batches', async () => {
    const { client } = fileDatabase();
    const commit = groupCommit(client);
    const insert = client.prepare('insert into items (v) values (?)');
    await commit(() => insert.run('first'));
    await commit(() => insert.run('second'));
    expect(client.query('select count(*) as n from items').get()).toEqual({ n: 2 });
  });
});
