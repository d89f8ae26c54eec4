// Issue 13 in `bun run bench` (alone: BENCH_ONLY=several): Gatehouse on PostgreSQL + Redis, one
// instance and two behind a round-robin split, beside SQLite and the hashing ceiling of the same run.
import { RedisClient, SQL } from 'bun';
import { join } from 'node:path';
import { migratePostgres } from '../../src/db/pg-client';
import { generateId } from '../../src/security/random';
import { postgresAvailability, startPostgres } from '../support/postgres';
import { redisAvailability, startRedis } from '../support/redis';
import { ARGON2, hashingCeiling } from './hashing';
import { cpuTicks, waitForIdle, withPeakRss } from './proc';
import { type Row, target, type Target } from './report';
import { seedUsers } from './seed';
import { startGatehouse, type RunningServer } from './server';
import { runWrk, type LoadSettings, type Request } from './wrk';

const SECRET = 'bench-secret-0123456789';
const PASSWORD = 'bench password 0123';
const USERS = 1_000;

/** Counts what one set of requests cost PostgreSQL (transactions: each statement outside one is one) and Redis (commands). */
async function counters(sql: SQL, database: string, redisUrl: string) {
  const [row] = await sql`select xact_commit + xact_rollback as n from pg_stat_database where datname = ${database}`;
  const redis = new RedisClient(redisUrl);
  const info = String(await redis.send('INFO', ['stats']));
  redis.close();
  return { pg: Number(row.n), redis: Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0) };
}

export async function seedPostgres(sql: SQL, passwordHash: string): Promise<string[]> {
  const rows = Array.from({ length: USERS }, (_, n) => ({
    id: generateId(),
    created_at: 1_767_225_600 + n,
    email: `user${n}@example.com`,
    password_hash: passwordHash,
    recovery_code_hash: passwordHash,
  }));
  await sql`insert into users ${sql(rows)}`;
  return rows.map((row) => row.id);
}

export async function severalBench(dir: string, settings: LoadSettings, log: (message: string) => void): Promise<{ rows: Row[]; targets: Target[]; skipped?: string }> {
  for (const availability of [await postgresAvailability(), await redisAvailability()]) {
    if (!availability.ok) return { rows: [], targets: [], skipped: availability.reason };
  }
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  const servers: RunningServer[] = [];
  try {
    const passwordHash = await Bun.password.hash(PASSWORD, ARGON2);
    const database = await pg.createDatabase({ name: 'gatehouse_bench' });
    await migratePostgres(database.url);
    const admin = new SQL({ url: database.url, max: 1 });
    const [userId] = await seedPostgres(admin, passwordHash);
    const sqliteUsers = seedUsers(join(dir, 'several-sqlite'), USERS, passwordHash);

    const measure = async (name: string, request: Request, processes: RunningServer[], note = '') => {
      log(name);
      await runWrk(request, { ...settings, seconds: 1 });
      for (const server of processes) await waitForIdle(server.pid);
      const before = await counters(admin, database.name, redis.url);
      const cpuBefore = processes.map((server) => cpuTicks(server.pid));
      const { result, peakRssMb } = await withPeakRss(processes[0]!.pid, () => runWrk(request, settings));
      const cpu = processes.reduce((sum, server, i) => sum + cpuTicks(server.pid) - cpuBefore[i]!, 0);
      const after = await counters(admin, database.name, redis.url);
      for (const server of processes) await waitForIdle(server.pid);
      const perRequest = (n: number) => (n / Math.max(1, result.requests)).toFixed(2);
      const costs = `per request: PostgreSQL ${perRequest(after.pg - before.pg)} statements, Redis ${perRequest(after.redis - before.redis)} commands (also those inside scripts)`;
      return { scenario: name, load: result, peakRssMb, cpuUs: (cpu * 10_000) / Math.max(1, result.requests), note: [costs, note].filter(Boolean).join('; ') } satisfies Row;
    };
    const headers = { authorization: SECRET, 'content-type': 'application/json' };
    const getUser = (base: string, id: string, split?: string[]): Request => ({ url: `${base}/users/${id}`, headers, servers: split });
    const verify = (base: string, id: string, split?: string[]): Request => ({
      url: `${base}/users/${id}/verify-password`,
      method: 'POST',
      headers,
      body: JSON.stringify({ password: PASSWORD, client_ip: '%s' }),
      uniqueClientIp: true,
      servers: split,
    });

    const sqlite = await startGatehouse(join(dir, 'several-sqlite'), SECRET);
    servers.push(sqlite);
    const onSqlite = await measure(`GET /users/{id}, SQLite (${USERS} users)`, getUser(sqlite.baseUrl, sqliteUsers.sampleIds[0]!), [sqlite], 'same run, for the ratio');
    await sqlite.stop();

    const flags = ['--database-url', database.url, '--redis-url', redis.url];
    const a = await startGatehouse(join(dir, 'several-a'), SECRET, flags);
    servers.push(a);
    const pgGet = await measure('GET /users/{id}, PostgreSQL + Redis, 1 instance', getUser(a.baseUrl, userId!), [a]);
    log('ceiling: argon2id verify in-process');
    const { perSecond: ceiling } = await hashingCeiling(settings.connections, settings.seconds);
    const pgVerify = await measure('POST verify-password, PostgreSQL + Redis, 1 instance', verify(a.baseUrl, userId!), [a], 'a new client_ip each request');

    const b = await startGatehouse(join(dir, 'several-b'), SECRET, flags);
    servers.push(b);
    const split = [a.baseUrl, b.baseUrl];
    const pgGet2 = await measure('GET /users/{id}, PostgreSQL + Redis, 2 instances', getUser(a.baseUrl, userId!, split), [a, b], 'wrk threads split between them');
    const pgVerify2 = await measure('POST verify-password, PostgreSQL + Redis, 2 instances', verify(a.baseUrl, userId!, split), [a, b], 'both on the same 2 cores');
    await admin.close();

    const rate = (row: Row) => row.load!.requestsPerSecond;
    const ceilingRow: Row = { scenario: `Ceiling: \`Bun.password.verify\` ×${settings.connections} in flight, in-process`, perSecond: ceiling, note: 'verifies/s, same run' };
    return {
      rows: [onSqlite, pgGet, pgGet2, ceilingRow, pgVerify, pgVerify2],
      targets: [
        target('verify-password on PostgreSQL ÷ hashing ceiling', rate(pgVerify) / ceiling, '≥', 0.9),
        target('GET /users/{id} on PostgreSQL ÷ on SQLite', rate(pgGet) / rate(onSqlite), '≥', 0.3),
      ],
    };
  } finally {
    for (const server of servers) await server.stop().catch(() => undefined);
    await Promise.all([pg.close(), redis.close()]);
  }
}
