import { Database } from 'bun:sqlite';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import { embeddedMigrations } from './migrations';
import * as schema from './schema';
import { shareReadTransactions } from './read-snapshot';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };
/** What a synchronous `db.transaction` callback receives. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

const DATABASE_FILE = 'gatehouse.db';
/**
 * The page cache of the server's user views (db/read-snapshot.ts): 104 MiB instead of SQLite's 2 MiB,
 * filled only as pages are read. With a million users the 2 MiB held no working set, and a read by
 * random id ran at 0.55 of its rate at 1,000 users; 64 MiB gave 0.67 to 0.79, 104 MiB holds the
 * bench's 20,000 users' pages (both trees) and gave 0.85 and 0.78, at 242 MB of RSS against the 250 MB target
 * (docs/benchmarks.md, "Data size"). A memory map counts the file's pages in the server's RSS.
 * The commands keep SQLite's default and size their own for the bulk work (db/bulk.ts): under a
 * server's cache an import of a million users peaked at 179 MB instead of 151, and took 24 s, not 19.
 */
export const SERVER_PAGE_CACHE_KIB = 106_496;
/**
 * The server's main connection, once the views read on their own one with SERVER_PAGE_CACHE_KIB
 * (`sharedReads`): everything else. With 64 MiB on both, the million-user bench ended at 253 MB of
 * RSS, over its 250 MB target; its lists and writes touch few pages.
 */
export const SERVER_MAIN_PAGE_CACHE_KIB = 16_384;

/** Where `openDatabase(dir)` keeps the database. */
export const databasePath = (dir: string): string => join(dir, DATABASE_FILE);

const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) `<dir>/gatehouse.db`, or an in-memory database for tests when dir is
 * null; with SQLite's own page cache unless `pageCacheKib` says otherwise. `sharedReads`: the hot
 * reads (`snapshotQuery`) share a read transaction per turn of the event loop (db/read-snapshot.ts),
 * on a second connection with its own page cache; the server's choice.
 */
export function openDatabase(dir: string | null, options: { pageCacheKib?: number; sharedReads?: { pageCacheKib: number } } = {}): Db {
  const sqlite = new Database(dir === null ? ':memory:' : prepareFile(dir), { strict: true });
  sqlite.exec('PRAGMA journal_mode = WAL');
  sqlite.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // FULL makes every acknowledged commit durable across power loss, not only across crashes.
  sqlite.exec('PRAGMA synchronous = FULL');
  sqlite.exec('PRAGMA foreign_keys = ON');
  if (options.pageCacheKib !== undefined) sqlite.exec(`PRAGMA cache_size = -${options.pageCacheKib}`); // negative: KiB
  if (options.sharedReads !== undefined) shareReadTransactions(sqlite, { busyTimeoutMs: BUSY_TIMEOUT_MS, pageCacheKib: options.sharedReads.pageCacheKib });
  const db = drizzle({ client: sqlite, schema }) as Db;
  migrate(db);
  return db;
}

/** Creates the file with mode 0600 first; SQLite gives its -wal and -shm files the same mode. */
function prepareFile(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = databasePath(dir);
  if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
  return path;
}

function migrate(db: Db): void {
  // drizzle's migrator reads a folder; ours are embedded, so hand the same records to its dialect.
  const dialect = (db as unknown as { dialect: { migrate(m: unknown, s: unknown, c: unknown): void } }).dialect;
  const session = (db as unknown as { session: unknown }).session;
  dialect.migrate(embeddedMigrations(), session, { migrationsFolder: '' });
}
