/** A bulk write into a database with no users that no other connection has open (gatehouse import's first load). */
import type { Database } from 'bun:sqlite';
import { pragmaValue } from './bulk';
import { isBusy } from './constraints';

/** Lines a range of the load: the progress moves and an interrupt is seen about once a second. */
const LOAD_RANGE = 100_000;
/**
 * The written tables, and those of their indexes the load appends to in their own order (kept: a
 * sort would only cost time). Every other index of the tables is dropped and built again.
 */
export interface LoadIndexes {
  tables: readonly string[];
  appended: readonly string[];
}

/**
 * The page cache of the load. With the random indexes dropped, only the primary keys' (users by id)
 * take pages at random: 24 MB was as fast as the bulk writes' 40 MB, and the peak RSS 12 MiB lower.
 */
const LOAD_CACHE_SIZE = -24_000;
/**
 * The page cache of a load written as the lines are read, beside the thread that reads them: 24 MB
 * peaked at 159 MiB for a million users, 16 MB at 147 (and 8 MB at 139, but a tenth slower).
 */
export const LOAD_WHILE_READING_CACHE_SIZE = -16_000;
/**
 * The page cache while the indexes are built. SQLite's sorter keeps as many bytes in memory as the
 * page cache may hold before it spills to a temporary file: with the load's 40 MB each index build
 * peaked about 40 MB higher (207 MB in all for a million users); with 8 MB the peak stayed that of
 * the load, and the builds were no slower.
 */
const INDEX_BUILD_CACHE_SIZE = -8_000;

/**
 * Runs `write` over the ranges (from, to] covering (0, upTo] inside `beginLoadAlone`'s one
 * transaction, checking `signal` between ranges. Answers whether an aborted `signal` stopped it (and
 * rolled it all back), or null without writing when the database cannot be had alone.
 */
export async function loadAlone(sqlite: Database, indexed: LoadIndexes, upTo: number, signal: AbortSignal | null, write: (from: number, to: number) => void) {
  const load = beginLoadAlone(sqlite, indexed);
  if (load === null) return null;
  try {
    for (let from = 0; from < upTo; from += LOAD_RANGE) {
      if (signal?.aborted) return { stopped: true };
      write(from, Math.min(upTo, from + LOAD_RANGE));
      await Bun.sleep(0); // the progress and a signal's handler run
    }
    load.finish();
    return { stopped: false };
  } finally {
    load.end();
  }
}

/** A load in progress: what was written since `beginLoadAlone` is kept by `finish` only. */
export interface LoadInProgress {
  /** Builds the dropped indexes again (a UNIQUE one fails on a repeated value) and commits. */
  finish(): void;
  /** Rolls back what `finish` has not committed, and gives the database and connection back as they were. */
  end(): void;
}

/**
 * Opens one transaction that holds the database for itself, with the written tables' own indexes
 * dropped (built again, one sort each, by `finish`) and without the WAL: every page is written once,
 * into the database file. Null, changing nothing, when `users` holds a row or another connection has
 * the database open: the paced writes (db/bulk.ts) are then the way. Kept up row by row, the random
 * indexes (users by id and email, events by user) rewrite most of their pages in every paced
 * transaction once they outgrow the page cache, and a million users with random ids and emails took
 * 66 s paced against 20 to 28 s here (docs/benchmarks.md, "Data size").
 *
 * In WAL mode each connection holds a shared lock from its first read until it closes, so under the
 * exclusive locking mode BEGIN EXCLUSIVE fails at once (busy timeout 0) while a server has the
 * database open. Once taken, the lock is kept until the end: a server, backup or export started
 * meanwhile fails with `database is locked` (a server at its first statement), rather than a server
 * starting and then finding its writes refused. A crash leaves a rollback journal that the next
 * opening plays back.
 */
export function beginLoadAlone(sqlite: Database, indexed: LoadIndexes, loadCacheSize = LOAD_CACHE_SIZE): LoadInProgress | null {
  if (hasUsers(sqlite)) return null;
  const [busyTimeout, cacheSize] = [pragmaValue(sqlite, 'busy_timeout'), pragmaValue(sqlite, 'main.cache_size')];
  sqlite.exec('PRAGMA busy_timeout = 0; PRAGMA main.locking_mode = EXCLUSIVE');
  const end = () => {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    // In this order: WAL entered in the exclusive mode would keep the lock for good (its index then lives in this process).
    sqlite.exec(`PRAGMA busy_timeout = ${busyTimeout}; PRAGMA main.cache_size = ${cacheSize}; PRAGMA main.locking_mode = NORMAL`);
    sqlite.exec('PRAGMA main.journal_mode = WAL'); // as any opening sets it
    // A first read in WAL mode lets the lock go; without it this connection's next checkpoint failed as locked.
    sqlite.query('SELECT 1 FROM sqlite_master LIMIT 1').get();
  };
  let indexes: string[];
  try {
    if (!takenAlone(sqlite)) {
      end();
      return null;
    }
    sqlite.exec('PRAGMA main.journal_mode = DELETE');
    sqlite.exec(`PRAGMA main.cache_size = ${loadCacheSize}`);
    sqlite.exec('BEGIN EXCLUSIVE');
    indexes = dropIndexes(sqlite, indexed);
  } catch (error) {
    end();
    throw error;
  }
  let ended = false;
  return {
    finish() {
      sqlite.exec(`PRAGMA main.cache_size = ${INDEX_BUILD_CACHE_SIZE}`);
      for (const sql of indexes) sqlite.exec(sql);
      sqlite.exec('COMMIT');
    },
    end() {
      if (!ended) end();
      ended = true;
    },
  };
}

/** The exclusive lock, kept past this empty transaction, when nobody else has the database open and it holds no user. */
function takenAlone(sqlite: Database): boolean {
  try {
    sqlite.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    if (isBusy(error)) return false;
    throw error;
  }
  const empty = !hasUsers(sqlite); // a server may have written one since the look before the lock
  sqlite.exec('COMMIT');
  return empty;
}

/** Drops the tables' own indexes (not those of a primary key or UNIQUE column), answering the SQL that builds each again. */
function dropIndexes(sqlite: Database, { tables, appended }: LoadIndexes): string[] {
  const marks = (names: readonly string[]) => names.map(() => '?').join(', ');
  const rows = sqlite
    .query(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${marks(tables)}) AND name NOT IN (${marks(appended)})`)
    .all(...tables, ...appended);
  for (const { name } of rows as { name: string }[]) sqlite.exec(`DROP INDEX "${name}"`);
  return (rows as { sql: string }[]).map((row) => row.sql);
}

const hasUsers = (sqlite: Database) => (sqlite.query('SELECT EXISTS (SELECT 1 FROM users) AS found').get() as { found: number }).found === 1;
