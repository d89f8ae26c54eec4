import { openDatabase, SERVER_MAIN_PAGE_CACHE_KIB, SERVER_PAGE_CACHE_KIB } from '../db/client';
import { openPostgres } from '../db/pg-client';
import type { Logger } from '../http/log';
import { systemClock, type Clock } from '../security/clock';
import { createRateLimits, type RateLimits } from '../limits/rate-limit';
import { createSharedRateLimits } from '../limits/rate-limit-shared';
import { RedisLink } from '../limits/redis-link';
import { postgresStores, sqliteStores, type Stores } from '../stores';
import type { ServeConfig } from './config';

export interface Storage {
  stores: Stores;
  /** The SQLite database when that is the storage. */
  sqlite: ReturnType<typeof openDatabase> | null;
  /** 'sqlite' or 'postgres', for the start-up log line. */
  kind: string;
  close(): Promise<void>;
}

/**
 * `<dir>/gatehouse.db`, or PostgreSQL with --database-url (API.md §10): migrations applied under an
 * advisory lock before the first request.
 */
export async function openStorage(config: ServeConfig, outbox: { webhookOutbox: boolean; onOutboxWrite: () => void }): Promise<Storage> {
  if (config.databaseUrl === null) {
    const db = openDatabase(config.dir, { pageCacheKib: SERVER_MAIN_PAGE_CACHE_KIB, sharedReads: { pageCacheKib: SERVER_PAGE_CACHE_KIB } });
    return { stores: sqliteStores(db, outbox), sqlite: db, kind: 'sqlite', close: async () => db.$client.close() };
  }
  const db = await openPostgres(config.databaseUrl);
  return { stores: postgresStores(db, outbox), sqlite: null, kind: 'postgres', close: () => db.$client.close() };
}

export interface Limits {
  limits: RateLimits;
  close(): void;
}

/**
 * In this process's memory, or in Redis with --redis-url so every instance enforces one limit; while
 * Redis is unreachable each falls back to the per-process one, and moves back when it returns.
 */
export async function openLimits(config: ServeConfig, log: Logger, clock: Clock = systemClock): Promise<Limits> {
  const local = createRateLimits(clock);
  if (config.redisUrl === null) {
    if (config.databaseUrl !== null) log({ level: 'warn', message: 'no --redis-url: rate limits and lockouts are per instance' });
    return { limits: local, close: () => {} };
  }
  const link = new RedisLink({ url: config.redisUrl, log });
  await link.start();
  return { limits: createSharedRateLimits({ link, clock, local }), close: () => link.close() };
}
