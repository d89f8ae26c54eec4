import { postgresAvailability, startPostgres, type PostgresServer } from './postgres';
import { redisAvailability, startRedis, type RedisServer } from './redis';

/**
 * Which storage the HTTP suites run on (issue 13): `sqlite` (the default), `postgres` (one instance on
 * PostgreSQL and Redis) or `postgres-2` (two instances on one PostgreSQL and Redis, requests
 * alternating between them). `bun run test` runs the suites once per set-up; GATEHOUSE_TEST_SETUP
 * picks one for a plain `bun test`.
 */
export type Setup = 'sqlite' | 'postgres' | 'postgres-2';
const SETUPS: Setup[] = ['sqlite', 'postgres', 'postgres-2'];

function setupOf(value: string | undefined): Setup {
  const setup = (value ?? 'sqlite') as Setup;
  if (!SETUPS.includes(setup)) throw new Error(`GATEHOUSE_TEST_SETUP must be one of ${SETUPS.join(', ')}, got ${value}`);
  return setup;
}

export const SETUP: Setup = setupOf(process.env.GATEHOUSE_TEST_SETUP);
export const INSTANCES = SETUP === 'postgres-2' ? 2 : 1;

let engines: Promise<{ pg: PostgresServer; redis: RedisServer }> | undefined;

/**
 * A PostgreSQL cluster and a redis-server, started together. When one fails to start, the other is
 * stopped before the error is thrown: nothing is left running for no one to close.
 */
export async function startEngines(): Promise<{ pg: PostgresServer; redis: RedisServer }> {
  const [pg, redis] = await Promise.allSettled([startPostgres(), startRedis()]);
  if (pg.status === 'fulfilled' && redis.status === 'fulfilled') return { pg: pg.value, redis: redis.value };
  await Promise.all([pg.status === 'fulfilled' ? pg.value.close() : undefined, redis.status === 'fulfilled' ? redis.value.close() : undefined]);
  throw pg.status === 'rejected' ? pg.reason : (redis as PromiseRejectedResult).reason;
}

/** One PostgreSQL cluster and one redis-server for the whole test process, started on first use. */
export function sharedEngines(): Promise<{ pg: PostgresServer; redis: RedisServer }> {
  engines ??= (async () => {
    for (const availability of [await postgresAvailability(), await redisAvailability()]) {
      if (!availability.ok) throw new Error(`set-up ${SETUP} needs PostgreSQL and Redis: ${availability.reason}`);
    }
    return startEngines();
  })();
  return engines;
}

/**
 * Called once after every test file (test/support/preload.ts). The harnesses still open are closed
 * first: stopping the engines under their pools and background work (sweeps, event polls) failed a
 * query in flight with an unhandled "Connection closed", now and then, at the end of a run.
 */
export async function closeSharedEngines(): Promise<void> {
  const open = [...tenants];
  tenants.clear();
  try {
    await Promise.all(open.map((tenant) => tenant.close()));
  } finally {
    // Also when a harness failed to close: the engines are processes that would outlive the run.
    const started = await engines?.catch(() => undefined);
    await Promise.all([started?.pg.close(), started?.redis.close()]);
  }
}

interface Tenant {
  lastUsed: number;
  close(): Promise<void>;
}

/**
 * Each harness gets a database of its own. The ones not used for longest are closed and dropped once
 * there are more than MAX_TENANTS, so a long run holds neither thousands of connections nor databases.
 */
const MAX_TENANTS = 16;
const tenants = new Set<Tenant>();
let tick = 0;

export function trackTenant(close: () => Promise<void>): { touch(): void } {
  const tenant: Tenant = { lastUsed: ++tick, close };
  tenants.add(tenant);
  if (tenants.size > MAX_TENANTS) {
    const oldest = [...tenants].sort((a, b) => a.lastUsed - b.lastUsed)[0]!;
    tenants.delete(oldest);
    void oldest.close();
  }
  return { touch: () => (tenant.lastUsed = ++tick) };
}
