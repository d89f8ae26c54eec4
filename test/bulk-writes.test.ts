import { expect, test } from 'bun:test';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beginBulkWrites, pacedWrites, type WritePacing } from '../src/db/bulk';
import { backgroundCheckpointer, type Checkpointer } from '../src/db/checkpointer';
import { openDatabase, SERVER_MAIN_PAGE_CACHE_KIB } from '../src/db/client';
import { parseServeConfig } from '../src/cli/config';
import { openStorage } from '../src/cli/storage';
import { tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
/** No pauses, and budgets no range comes near. */
const PACING: WritePacing = { quietLockMs: 60_000, busyLockMs: 60_000, busyForMs: 0, pauseMs: 0, maxWalFrames: Infinity };
/** Six transactions: ranges start at 2,000 lines and double while they take under half the budget. */
const LINES = 2_000 * (2 ** 6 - 1);

/** A new database in WAL mode with a table to write to, and the size of its file (not its WAL). */
function open() {
  const dir = tempDir();
  const sqlite = openDatabase(dir).$client;
  sqlite.exec('CREATE TABLE ranges (upto INTEGER NOT NULL, filler TEXT NOT NULL)');
  const fill = sqlite.query(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO ranges SELECT ?, printf('%.500c', 'x') FROM n",
  );
  return { sqlite, dir, fileSize: () => statSync(join(dir, 'gatehouse.db')).size, writeRange: (to: number) => void fill.run(to) };
}

/** Counts what pacedWrites asks of its checkpointer, and when. */
function countingCheckpointer(committedRanges: () => number) {
  const requestedAfter: number[] = [];
  const caughtUpAfter: number[] = [];
  let closed = false;
  const checkpointer: Checkpointer = {
    request: () => void requestedAfter.push(committedRanges()),
    settled: async () => {},
    close: async () => void (closed = true),
    walFrames: () => 0,
    catchUp: async () => void caughtUpAfter.push(committedRanges()),
  };
  return { checkpointer, requestedAfter, caughtUpAfter, closed: () => closed };
}

test('a checkpoint is asked for after every transaction but the last, and the checkpointer is closed at the end', async () => {
  const { sqlite, writeRange } = open();
  const opened = sqlite.query('PRAGMA main.cache_size').get();
  const ranges = () => (sqlite.query('SELECT count(DISTINCT upto) AS n FROM ranges').get() as { n: number }).n;
  const counting = countingCheckpointer(ranges);
  const outcome = await pacedWrites(sqlite, PACING, LINES, null, (_, to) => writeRange(to), counting.checkpointer);
  expect(outcome).toEqual({ reached: LINES, stopped: false });
  expect(ranges()).toBe(6);
  expect(counting.requestedAfter).toEqual([1, 2, 3, 4, 5]);
  expect(counting.caughtUpAfter).toEqual([]);
  expect(counting.closed()).toBe(true);
  expect(sqlite.query('PRAGMA main.cache_size').get()).toEqual(opened); // left as it was
});

test("once another connection has committed, every later transaction is checkpointed in the pause, on the writer's connection", async () => {
  const { sqlite, dir, writeRange } = open();
  const { cache_size: opened } = sqlite.query('PRAGMA main.cache_size').get() as { cache_size: number };
  const server = openDatabase(dir).$client;
  const checkpointedAfter: number[] = [];
  const exec = sqlite.exec.bind(sqlite);
  sqlite.exec = ((sql: string) => {
    if (sql.includes('wal_checkpoint')) checkpointedAfter.push(ranges());
    return exec(sql);
  }) as typeof sqlite.exec;
  const ranges = () => (sqlite.query('SELECT count(DISTINCT upto) AS n FROM ranges WHERE upto > 0').get() as { n: number }).n;
  const counting = countingCheckpointer(ranges);
  const cacheSizes: unknown[] = [];
  await pacedWrites(sqlite, PACING, LINES, null, (from, to) => {
    writeRange(to);
    cacheSizes.push((sqlite.query('PRAGMA main.cache_size').get() as { cache_size: number }).cache_size);
    // Runs in the pause after this first transaction's commit, as a server's write would.
    if (from === 0) queueMicrotask(() => server.exec("INSERT INTO ranges VALUES (0, '')"));
  }, counting.checkpointer);
  expect(ranges()).toBe(6);
  expect(counting.requestedAfter).toEqual([1]);
  expect(checkpointedAfter).toEqual([2, 3, 4, 5]);
  expect(counting.caughtUpAfter).toEqual([]);
  // SQLite now drops the writer's whole cache at each transaction: a smaller one is refilled, until the end.
  expect(cacheSizes).toEqual([opened, -16_000, -16_000, -16_000, -16_000, -16_000]);
  expect(opened).not.toBe(-16_000);
  expect(sqlite.query('PRAGMA main.cache_size').get()).toEqual({ cache_size: opened });
});

test('the checkpointer is closed also when a write throws', async () => {
  const { sqlite } = open();
  const counting = countingCheckpointer(() => 0);
  const failing = pacedWrites(sqlite, PACING, LINES, null, () => {
    throw new Error('disk full');
  }, counting.checkpointer);
  await expect(failing).rejects.toThrow('disk full');
  expect(counting.closed()).toBe(true);
  expect(sqlite.inTransaction).toBe(false);
});

test('the background checkpoint copies the committed transactions into the database file, on another thread', async () => {
  const { sqlite, dir, fileSize, writeRange } = open();
  const endBulkWrites = beginBulkWrites(sqlite); // no automatic checkpoints: only ours move pages
  writeRange(1);
  const before = fileSize();
  const checkpointer = backgroundCheckpointer(join(dir, 'gatehouse.db'));
  checkpointer.request();
  checkpointer.request(); // one runs already: this one is left out
  await checkpointer.settled();
  // 1,000 rows of 500 bytes are about 125 pages of 4 KiB more in the file itself.
  expect(fileSize() - before).toBeGreaterThan(100 * 4096);
  await checkpointer.close();
  endBulkWrites();
});

test('a checkpoint that fails is an error of the bulk write', async () => {
  const { sqlite, dir, writeRange } = open();
  const checkpointer = backgroundCheckpointer(join(dir, 'missing', 'gatehouse.db'));
  const written = pacedWrites(sqlite, PACING, LINES, null, (_, to) => writeRange(to), checkpointer);
  await expect(written).rejects.toThrow('checkpointing the WAL');
});

test('once the WAL holds maxWalFrames pages, the pause waits for a checkpoint to catch up instead of asking for one', async () => {
  const { sqlite, writeRange } = open();
  const opened = sqlite.query('PRAGMA main.cache_size').get();
  const ranges = () => (sqlite.query('SELECT count(DISTINCT upto) AS n FROM ranges').get() as { n: number }).n;
  const counting = countingCheckpointer(ranges);
  const full: Checkpointer = { ...counting.checkpointer, walFrames: () => 500 };
  await pacedWrites(sqlite, { ...PACING, maxWalFrames: 500 }, LINES, null, (_, to) => writeRange(to), full);
  expect(counting.caughtUpAfter).toEqual([1, 2, 3, 4, 5]);
  expect(counting.requestedAfter).toEqual([]);
});

test('after a catch-up the next transaction writes the WAL from its start again', async () => {
  const { sqlite, dir, writeRange } = open();
  const endBulkWrites = beginBulkWrites(sqlite);
  const walSize = () => statSync(join(dir, 'gatehouse.db-wal')).size;
  const checkpointer = backgroundCheckpointer(join(dir, 'gatehouse.db'));
  const transaction = (to: number) => sqlite.transaction(() => writeRange(to)).immediate();
  transaction(1);
  const afterOne = walSize();
  // The WAL only starts over once a checkpoint has copied all of it before a transaction begins.
  await checkpointer.catchUp();
  expect(checkpointer.walFrames()).toBe(0);
  transaction(2);
  expect(walSize()).toBe(afterOne);
  // Without a catch-up in between, the next transaction is appended: the file grows past the first's
  // (which also held the tables' creation) by most of a transaction's 125 pages.
  transaction(3);
  expect(walSize()).toBeGreaterThan(afterOne + 50 * 4096);
  await checkpointer.close();
  endBulkWrites();
});

test("the server's main connection has its page cache (the views' connection another); the commands' (import, export, backup) keep SQLite's 2 MiB default", async () => {
  const dir = tempDir();
  const storage = await openStorage(parseServeConfig(['--dir', dir, '--secret', 'page-cache-secret-0123456789'], {}), { webhookOutbox: false, onOutboxWrite: () => {} });
  try {
    expect(storage.sqlite!.$client.query('PRAGMA cache_size').get()).toEqual({ cache_size: -SERVER_MAIN_PAGE_CACHE_KIB });
  } finally {
    await storage.close();
  }
  // As src/cli/transfer.ts opens it: under the server's cache a million-user import peaked at 179 MB, over its 150.
  const tool = openDatabase(dir).$client;
  expect(tool.query('PRAGMA cache_size').get()).toEqual({ cache_size: -2000 });
  tool.close();
});
