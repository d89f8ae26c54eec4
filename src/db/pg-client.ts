import { SQL } from 'bun';
import { drizzle, type BunSQLDatabase } from 'drizzle-orm/bun-sql';
import { embeddedPgMigrations } from './pg-migrations';
import * as schema from './pg-schema';

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };
export type PgTx = Parameters<Parameters<PgDb['transaction']>[0]>[0];

export interface PostgresOptions {
  /** Connections in this instance's pool. */
  maxConnections?: number;
  /** Opening a connection fails after this long (Bun accepts fractions of a second). */
  connectionTimeoutMs?: number;
  /** The server cancels a statement that runs (or waits for a lock) longer than this: SQLSTATE 57014. */
  statementTimeoutMs?: number;
  /** The server ends a session left idle inside a transaction this long, releasing its row locks. */
  idleInTransactionTimeoutMs?: number;
  /** Idle connections close after this long, so a quiet instance does not hold server sessions. */
  idleTimeoutSeconds?: number;
}

const DEFAULTS: Required<PostgresOptions> = {
  maxConnections: 10,
  connectionTimeoutMs: 1000,
  statementTimeoutMs: 1500,
  idleInTransactionTimeoutMs: 5000,
  idleTimeoutSeconds: 60,
};

/**
 * Bun.SQL lets a PGDATABASE variable override the database named in the URL (not the user, host or
 * port); the URL the operator gave must win, so its database is passed as an option too.
 */
function connectionOf(url: string): { url: string; database?: string } {
  const database = decodeURIComponent(new URL(url).pathname.slice(1));
  return database === '' ? { url } : { url, database };
}

/** pg_advisory_lock key for migrations: the bytes of "gatehous", so no other tool's key collides by chance. */
export const MIGRATION_LOCK_KEY = 0x6761_7465_686f_7573n;

/**
 * Opens the pool and brings the schema up to date first. No connection is made until the migration
 * runs, so an unreachable server fails here with the driver's connection error.
 */
export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PgDb> {
  const settings = { ...DEFAULTS, ...options };
  await migratePostgres(url, settings.connectionTimeoutMs);
  const client = new SQL({
    ...connectionOf(url),
    max: settings.maxConnections,
    connectionTimeout: settings.connectionTimeoutMs / 1000,
    idleTimeout: settings.idleTimeoutSeconds,
    connection: {
      application_name: 'gatehouse',
      statement_timeout: settings.statementTimeoutMs,
      idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
    },
  });
  return drizzle({ client, schema }) as PgDb;
}

/**
 * Applies the embedded migrations under a session advisory lock, on one reserved connection of a
 * pool of its own (no statement timeout: an index on a large table may take a while). Drizzle's pg
 * migrator takes no lock itself: two instances would both read "nothing applied" and collide.
 * A second instance waits on the lock, then finds every migration applied and does nothing.
 */
export async function migratePostgres(url: string, connectionTimeoutMs = DEFAULTS.connectionTimeoutMs): Promise<void> {
  const client = new SQL({ ...connectionOf(url), max: 1, connectionTimeout: connectionTimeoutMs / 1000, connection: { application_name: 'gatehouse-migrate' } });
  try {
    const connection = await client.reserve();
    try {
      await connection`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY.toString()}::bigint)`;
      // drizzle's migrator reads a folder; ours are embedded, so hand the same records to its dialect.
      const db = drizzle({ client: connection }) as unknown as {
        dialect: { migrate(migrations: unknown, session: unknown, config: unknown): Promise<void> };
        session: unknown;
      };
      await db.dialect.migrate(embeddedPgMigrations(), db.session, { migrationsFolder: '' });
    } finally {
      // Closing the connection would release the lock too; unlocking keeps it explicit.
      await connection`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY.toString()}::bigint)`.catch(() => undefined);
      connection.release();
    }
  } finally {
    await client.close();
  }
}

const TOOL_CONNECTION_TIMEOUT_MS = 5000;

/**
 * For the command line (gatehouse import and export): the schema brought up to date first, then one
 * connection of its own without the server pool's statement and idle-in-transaction timeouts, which
 * would cancel a bulk statement or end an export whose reader is slow.
 */
export async function openPostgresForTools(url: string, command: string): Promise<SQL> {
  await migratePostgres(url, TOOL_CONNECTION_TIMEOUT_MS);
  return new SQL({ ...connectionOf(url), max: 1, connectionTimeout: TOOL_CONNECTION_TIMEOUT_MS / 1000, connection: { application_name: `gatehouse-${command}` } });
}
