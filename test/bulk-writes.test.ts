import { expect, test } from 'bun:test';
import type { Database } from 'bun:sqlite';
import { pacedWrites, type WritePacing } from '../src/db/bulk';
import { openDatabase } from '../src/db/client';
import { tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
/** No pauses, budgets no range comes near, and another connection's commit counts as writing for no time at all. */
const PACING: WritePacing = { quietLockMs: 60_000, busyLockMs: 60_000, busyForMs: 0, pauseMs: 0, quietCheckpointEvery: 3 };
/** Six transactions: ranges start at 2,000 lines and double while they take under half the budget. */
const LINES = 2_000 * (2 ** 6 - 1);

/** Two connections to one new database, and how many checkpoints the first was asked for. */
function open() {
  const dir = tempDir();
  const [importer, server] = [openDatabase(dir).$client, openDatabase(dir).$client];
  importer.exec('CREATE TABLE ranges (upto INTEGER NOT NULL)');
  let checkpoints = 0;
  const exec = importer.exec.bind(importer);
  importer.exec = ((sql: string) => {
    if (sql.includes('wal_checkpoint')) checkpoints++;
    return exec(sql);
  }) as Database['exec'];
  const writeRange = (to: number) => void importer.query('INSERT INTO ranges VALUES (?)').run(to);
  return { importer, server, writeRange, checkpoints: () => checkpoints };
}

test('with no other writer, the WAL is checkpointed after every third transaction', async () => {
  const { importer, writeRange, checkpoints } = open();
  const outcome = await pacedWrites(importer, PACING, LINES, null, (_, to) => writeRange(to));
  expect(outcome).toEqual({ reached: LINES, stopped: false });
  expect(importer.query('SELECT count(*) AS n FROM ranges').get()).toEqual({ n: 6 });
  expect(checkpoints()).toBe(2);
});

test('once another connection has committed, the WAL is checkpointed after every transaction, also when it stopped', async () => {
  const { importer, server, writeRange, checkpoints } = open();
  await pacedWrites(importer, PACING, LINES, null, (from, to) => {
    writeRange(to);
    // Runs in the pause after this first transaction's commit, as a server's write would.
    if (from === 0) queueMicrotask(() => server.exec('INSERT INTO ranges VALUES (0)'));
  });
  expect(importer.query('SELECT count(*) AS n FROM ranges').get()).toEqual({ n: 7 });
  expect(checkpoints()).toBe(5);
});
