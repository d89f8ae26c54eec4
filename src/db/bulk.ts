/** Bulk reads and writes on a database a running server shares (gatehouse import, export). */
import type { Database } from 'bun:sqlite';
import { closeSync, existsSync, fsyncSync, openSync } from 'node:fs';
import { backgroundCheckpointer, type Checkpointer } from './checkpointer';

/** A new webhook-id in SQLite's SQL (the shape of schema.ts's newWebhookId), for bulk inserts of events. */
export const WEBHOOK_ID_SQL = "'evt_' || lower(hex(randomblob(16)))";

/**
 * How long one transaction of a bulk write may hold SQLite's single write lock, and the pause after
 * it. A server write that meets the lock sleeps in SQLite's busy handler, which retries at most
 * 100 ms apart, so each pause lets a waiting write in; back-to-back transactions starve it until its
 * 5 s busy timeout fails the request. While no other connection commits, transactions may run
 * `quietLockMs`; once one does (or did in the last `busyForMs`), only `busyLockMs`. Fewer, larger
 * transactions write each random index page fewer times: 1,000,000 users take about 3 times longer
 * in 200 ms transactions than in 1 s ones (docs/migrating.md, "Import while the server runs").
 * While no other connection commits, the WAL is checkpointed in the background as the next
 * transaction runs, so it only starts over when a checkpoint has caught up before a transaction
 * begins. That costs a checkpoint's wait, so the pause waits for one only once the WAL holds
 * `maxWalFrames` pages: 1,000,000 users grow it to about 1 GB, and a WAL capped at 256 MB took back
 * most of the gain. Once another connection has committed, each transaction is checkpointed in the
 * pause on this connection, as before the thread: the WAL then starts over with every transaction,
 * and a server's commit never finds a long WAL to copy in its own automatic checkpoint (docs/migrating.md,
 * "Import while the server runs").
 */
export interface WritePacing {
  quietLockMs: number;
  busyLockMs: number;
  busyForMs: number;
  pauseMs: number;
  maxWalFrames: number;
}
export const DEFAULT_PACING: WritePacing = { quietLockMs: 1_000, busyLockMs: 200, busyForMs: 2_000, pauseMs: 100, maxWalFrames: 262_144 };

export type RangeWrite = (from: number, to: number) => boolean | void;

/** The next range's size so a transaction takes about `budgetMs`: at most twice the last, at least 200 lines. */
export const nextChunkSize = (size: number, budgetMs: number, tookMs: number, max = Infinity): number =>
  Math.min(max, Math.max(200, Math.round(size * Math.min(2, budgetMs / Math.max(1, tookMs)))));

/**
 * Runs `write` over the ranges (from, to] covering (0, upTo], each in its own IMMEDIATE transaction,
 * sized to the lock budget. After each commit but the last the WAL is checkpointed: in the background
 * while no other connection commits, in the pause once one has (see WritePacing; `beginBulkWrites`
 * does the last one). `write` returning false rolls its range back and stops; so does an aborted
 * `signal`, between ranges.
 */
export async function pacedWrites(
  sqlite: Database,
  pacing: WritePacing,
  upTo: number,
  signal: AbortSignal | null,
  write: RangeWrite,
  checkpointer: Checkpointer = backgroundCheckpointer(sqlite.filename),
) {
  const cacheSize = mainCacheSize(sqlite);
  try {
    return await writeRanges(sqlite, pacing, upTo, signal, write, checkpointer);
  } finally {
    sqlite.exec(`PRAGMA main.cache_size = ${cacheSize}`); // it shrinks once another connection commits
    await checkpointer.close();
  }
}

async function writeRanges(sqlite: Database, pacing: WritePacing, upTo: number, signal: AbortSignal | null, write: RangeWrite, checkpointer: Checkpointer) {
  const dataVersion = sqlite.query('PRAGMA data_version');
  const othersCommitted = () => (dataVersion.get() as { data_version: number }).data_version;
  let seen = othersCommitted();
  let busyUntil = 0;
  let othersWrote = false;
  /**
   * Notes another connection's commits since the last look (they change `data_version`; this one's do
   * not), and at the first one shrinks the page cache (BUSY_CACHE_SIZE).
   */
  const lookForOthers = () => {
    const version = othersCommitted();
    if (version !== seen) {
      if (!othersWrote) sqlite.exec(`PRAGMA main.cache_size = ${BUSY_CACHE_SIZE}`);
      [busyUntil, othersWrote] = [performance.now() + pacing.busyForMs, true];
    }
    seen = version;
  };
  let size = 2_000;
  for (let from = 0; from < upTo; ) {
    if (signal?.aborted) return { reached: from, stopped: true };
    const to = Math.min(upTo, from + size);
    const started = performance.now();
    sqlite.exec('BEGIN IMMEDIATE');
    let keep: boolean | void;
    try {
      keep = write(from, to);
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK'); // a conflict under OR ROLLBACK has ended it
      throw error;
    }
    sqlite.exec(keep === false ? 'ROLLBACK' : 'COMMIT');
    if (keep === false) return { reached: from, stopped: true };
    const lockMs = performance.now() - started;
    from = to;
    lookForOthers();
    if (from === upTo) break; // nobody waits for a pause after the last
    const pause = Bun.sleep(pacing.pauseMs);
    if (othersWrote) await checkpointedHere(sqlite, checkpointer);
    else if (checkpointer.walFrames() >= pacing.maxWalFrames) await checkpointer.catchUp();
    else checkpointer.request();
    await pause;
    lookForOthers();
    size = nextChunkSize(size, performance.now() < busyUntil ? pacing.busyLockMs : pacing.quietLockMs, lockMs);
  }
  return { reached: upTo, stopped: false };
}

/** A checkpoint on the writer's own connection, as the server's commits meet it (see WritePacing). */
async function checkpointedHere(sqlite: Database, checkpointer: Checkpointer) {
  await checkpointer.settled();
  sqlite.exec('PRAGMA wal_checkpoint(PASSIVE)');
}

/**
 * The page cache of a bulk write, for the random indexes (users by id and email, events by user):
 * with emails in random order 32 MB took a sixth longer than 40, 48 MB was 3% faster but 8 MiB nearer
 * the import's 150 MB limit. Once another connection commits, SQLite drops this connection's whole
 * cache at each transaction's start, and 40 MB refilled each time had bursts 15 to 30 MiB over the
 * usual peak; 16 MB had none, was no slower there, and the other writer waited less (docs/benchmarks.md,
 * "Import, export and backup").
 */
const QUIET_CACHE_SIZE = -40_000;
const BUSY_CACHE_SIZE = -16_000;
/** A numeric pragma's value (`busy_timeout`, `main.cache_size`). */
export const pragmaValue = (sqlite: Database, name: string) => Object.values(sqlite.query(`PRAGMA ${name}`).get() as object)[0] as number;
const mainCacheSize = (sqlite: Database) => pragmaValue(sqlite, 'main.cache_size');

/**
 * For the duration of a bulk write: checkpoints by hand (above), everything synced at the end, and no
 * foreign key checks. The writer puts rows and what they reference in together under one lock;
 * checked, each costs a lookup, and SQLite keeps a statement journal for any check that could fail
 * halfway (see transfer/store.ts).
 */
export function beginBulkWrites(sqlite: Database): () => void {
  const cacheSize = mainCacheSize(sqlite);
  sqlite.exec(`PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = NORMAL; PRAGMA main.cache_size = ${QUIET_CACHE_SIZE}; PRAGMA foreign_keys = OFF`);
  return () => {
    sqlite.exec('PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA wal_checkpoint(PASSIVE); PRAGMA wal_autocheckpoint = 1000');
    sqlite.exec(`PRAGMA main.cache_size = ${cacheSize}`);
    // Under NORMAL the last commits may sit unsynced in the WAL when a reader kept the checkpoint back.
    const wal = `${sqlite.filename}-wal`;
    if (!existsSync(wal)) return;
    const fd = openSync(wal, 'r');
    fsyncSync(fd);
    closeSync(fd);
  };
}

/** Inside a transaction: `write`'s changes are kept when it returns and undone (then rethrown) when it throws. */
export function inSavepoint<T>(sqlite: Database, write: () => T): T {
  sqlite.exec('SAVEPOINT bulk_write');
  try {
    const result = write();
    sqlite.exec('RELEASE bulk_write');
    return result;
  } catch (error) {
    sqlite.exec('ROLLBACK TO bulk_write; RELEASE bulk_write');
    throw error;
  }
}

/** Groups a synchronous cursor into arrays, so the consumer can await between them (bounded memory). */
export async function* inBatches<Row, T>(rows: Iterator<Row>, size: number, map: (row: Row) => T): AsyncGenerator<T[]> {
  try {
    let batch: T[] = [];
    for (let next = rows.next(); !next.done; next = rows.next()) {
      batch.push(map(next.value));
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    rows.return?.();
  }
}

/**
 * `counters.users` is kept by a trigger that runs once per inserted row (migration 0001), a sixth
 * of a bulk insert's time. Inside the write transaction it is dropped, the count added once, and
 * the trigger put back as it was before the commit: other connections never see it missing, and a
 * rollback restores it.
 */
export function withoutUserCountTrigger(sqlite: Database) {
  const pause = userCountPause(sqlite);
  /** `insert` returns how many users it inserted, or false to roll the transaction back. */
  return (insert: () => number | false): boolean | void => {
    const resume = pause();
    const inserted = insert();
    if (inserted === false) return false;
    resume(inserted);
  };
}

/** Drops the trigger (if the schema has it) inside the open transaction; the answer adds what was inserted meanwhile and puts it back. */
export function userCountPause(sqlite: Database): () => (inserted: number) => void {
  const trigger = sqlite.query("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'users_count_insert'").get() as { sql: string } | null;
  const addCount = sqlite.prepare("UPDATE counters SET value = value + ? WHERE name = 'users'");
  return () => {
    if (trigger === null) return () => {};
    sqlite.exec('DROP TRIGGER users_count_insert');
    return (inserted) => {
      addCount.run(inserted);
      sqlite.exec(trigger.sql);
    };
  };
}
