// Issue 22 in `bun run bench` (with BENCH_ONLY=several too): does a second instance add capacity, and
// what did dropping the events advisory lock do to the write rate of two instances.
import { SQL } from 'bun';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { migratePostgres } from '../../src/db/pg-client';
import { postgresAvailability, startPostgres, type PostgresServer } from '../support/postgres';
import { redisAvailability, startRedis } from '../support/redis';
import { ARGON2 } from './hashing';
import { cpuTicks, waitForIdle } from './proc';
import { mean, type Row, target, type Target } from './report';
import { startProcess, type RunningServer } from './server';
import { runWrk, type LoadSettings, type Request } from './wrk';

const ROOT = join(import.meta.dir, '..', '..');
const SECRET = 'bench-secret-0123456789';
const PASSWORD = 'bench password 0123';
const WRITER_USERS = 100_000;
const TOTP_KEY = Buffer.alloc(20, 7).toString('base64');

/** The commit before the lock change (its events appenders take the advisory lock), or BENCH_EVENTS_BEFORE. */
function commitBefore(): string | undefined {
  if (process.env.BENCH_EVENTS_BEFORE) return process.env.BENCH_EVENTS_BEFORE;
  const found = Bun.spawnSync(['git', 'log', '--format=%H', '-1', '--grep=^PostgreSQL lock order: every transaction'], { cwd: ROOT });
  const commit = found.stdout.toString().trim();
  return commit === '' ? undefined : `${commit}^`;
}

/** That commit's tree (git archive: no worktree bookkeeping), sharing this checkout's node_modules. */
function checkout(commit: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const archive = Bun.spawnSync(['git', 'archive', '--format=tar', commit], { cwd: ROOT });
  if (archive.exitCode !== 0) throw new Error(`git archive ${commit}: ${archive.stderr}`);
  const tar = Bun.spawnSync(['tar', '-x', '-C', dir], { stdin: archive.stdout });
  if (tar.exitCode !== 0) throw new Error(`tar: ${tar.stderr}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

const serve = (tree: string, dir: string, flags: string[], core?: number) =>
  startProcess([
    ...(core === undefined ? [] : ['taskset', '-c', String(core)]),
    process.execPath, 'run', join(tree, 'src/main.ts'), 'serve', '--port', '0', '--dir', dir, '--secret', SECRET, '--pwned-check', 'off', ...flags,
  ]);

/** The advisory lock key every appender took before the change (the bytes of "gh-event"). */
const OLD_EVENTS_LOCK_KEY = 0x6768_2d65_7665_6e74n;

/**
 * Event-appending transactions a second at the database alone (32 connections, one insert and a
 * commit each), with the old advisory lock or without: the ceiling the lock put on every instance together.
 */
async function appendsPerSecond(url: string, withLock: boolean, seconds: number): Promise<number> {
  const sql = new SQL({ url, max: 32 });
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < end) {
        await sql.begin(async (tx) => {
          if (withLock) await tx`select pg_advisory_xact_lock(${OLD_EVENTS_LOCK_KEY.toString()}::bigint)`;
          await tx`insert into events (time, type, user_id) select 1, 'user.created', 'bench' where pg_current_xact_id() is not null`;
        });
        done++;
      }
    }),
  );
  await sql.close();
  return done / seconds;
}

/** Production durability for these scenarios: the test cluster runs without fsync, which would hide what a commit costs. */
async function durable(pg: PostgresServer): Promise<void> {
  await pg.admin(`ALTER SYSTEM SET fsync = on`);
  await pg.admin(`ALTER SYSTEM SET full_page_writes = on`);
  await pg.admin(`ALTER SYSTEM SET synchronous_commit = on`);
  await pg.admin(`SELECT pg_reload_conf()`);
}

export async function scaleOutBench(dir: string, settings: LoadSettings, log: (message: string) => void): Promise<{ rows: Row[]; targets: Target[]; notes: string[]; skipped?: string }> {
  for (const availability of [await postgresAvailability(), await redisAvailability()]) {
    if (!availability.ok) return { rows: [], targets: [], notes: [], skipped: availability.reason };
  }
  if (Bun.which('taskset') === null || cpus().length < 2) return { rows: [], targets: [], notes: [], skipped: 'needs taskset and 2 cores' };
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  const running: RunningServer[] = [];
  const start = async (...args: Parameters<typeof serve>) => {
    const server = await serve(...args);
    running.push(server);
    return server;
  };
  const stopAll = async () => {
    for (const server of running.splice(0)) await server.stop();
  };
  const notes: string[] = [];
  const load = () => `load average ${loadavg().map((n) => n.toFixed(1)).join(', ')}`;
  try {
    await durable(pg);
    const headers = { authorization: SECRET, 'content-type': 'application/json' };
    const measure = async (name: string, request: Request, servers: RunningServer[], warmup: Request = request): Promise<Row> => {
      log(`${name} (${load()})`);
      await runWrk(warmup, { ...settings, seconds: 1 });
      for (const server of servers) await waitForIdle(server.pid);
      const before = servers.map((server) => cpuTicks(server.pid));
      const loadBefore = load();
      const result = await runWrk(request, settings);
      const cpu = servers.reduce((sum, server, i) => sum + cpuTicks(server.pid) - before[i]!, 0);
      for (const server of servers) await waitForIdle(server.pid);
      return { scenario: name, load: result, cpuUs: (cpu * 10_000) / Math.max(1, result.requests), note: `before: ${loadBefore}` };
    };

    // verify-password: one instance on core 0, then two on cores 0 and 1 (PostgreSQL, Redis and wrk unpinned).
    const database = await pg.createDatabase({ name: 'gatehouse_pinned' });
    await migratePostgres(database.url);
    const admin = new SQL({ url: database.url, max: 1 });
    const hash = await Bun.password.hash(PASSWORD, ARGON2);
    const [{ id: userId }] = await admin`insert into users (id, created_at, email, password_hash, recovery_code_hash)
      values ('pinneduser00000000000000', 1767225600, 'pinned@example.com', ${hash}, ${hash}) returning id`;
    await admin.close();
    const flags = ['--database-url', database.url, '--redis-url', redis.url];
    const verify = (servers: RunningServer[]): Request => ({
      url: `${servers[0]!.baseUrl}/users/${userId}/verify-password`,
      method: 'POST',
      headers,
      body: JSON.stringify({ password: PASSWORD, client_ip: '%s' }),
      uniqueClientIp: true,
      servers: servers.map((server) => server.baseUrl),
    });
    const one = await start(ROOT, join(dir, 'pinned-a'), flags, 0);
    const single = await measure('POST verify-password, 1 instance pinned to core 0', verify([one]), [one]);
    await stopAll();
    const pair = [await start(ROOT, join(dir, 'pinned-a'), flags, 0), await start(ROOT, join(dir, 'pinned-b'), flags, 1)];
    const double = await measure('POST verify-password, 2 instances pinned to cores 0 and 1', verify(pair), pair);
    await stopAll();

    // Event-writing requests: DELETE /users/{id}/totp-credential (user lock, delete, one event), 32 writers on two instances.
    const before = commitBefore();
    const trees: [string, string][] = [['this build', ROOT]];
    if (before !== undefined) trees.push([`before the lock change (${before})`, checkout(before, join(dir, 'tree-before'))]);
    else notes.push('no commit before the lock change found: the before row is missing');
    const writes: Row[] = [];
    // Interleaved, twice each, so a slow spell of the shared machine does not land on one side only.
    for (const round of [1, 2]) {
      for (const [label, tree] of trees) {
        const db = await pg.createDatabase({ name: `gatehouse_events_${round}_${writes.length}` });
        const eventFlags = ['--database-url', db.url, '--redis-url', redis.url];
        const a = await start(tree, join(dir, `events-a-${writes.length}`), eventFlags);
        const seed = new SQL({ url: db.url, max: 1 });
        for (const prefix of ['ev', 'ew']) {
          const count = prefix === 'ev' ? WRITER_USERS : 10_000;
          await seed.unsafe(`insert into users (id, created_at, password_hash, recovery_code_hash)
            select '${prefix}' || lpad(g::text, 22, '0'), 1767225600, 'x', 'x' from generate_series(1, ${count}) g`);
          await seed.unsafe(`insert into totp_credentials (user_id, created_at, key, last_used_step)
            select id, 1767225600, '${TOTP_KEY}', 0 from users where id like '${prefix}%'`);
          const paths = Array.from({ length: count }, (_, n) => `/users/${prefix}${String(n + 1).padStart(22, '0')}/totp-credential`);
          writeFileSync(join(dir, `${prefix}-paths.txt`), `${paths.join('\n')}\n`);
        }
        await seed.unsafe('VACUUM ANALYZE');
        await seed.close();
        const b = await start(tree, join(dir, `events-b-${writes.length}`), eventFlags);
        const request = (file: string): Request => ({ url: a.baseUrl, method: 'DELETE', headers, pathsFile: join(dir, file), servers: [a.baseUrl, b.baseUrl] });
        writes.push(await measure(`DELETE totp-credential (1 event each), 2 instances, ${settings.connections} writers: ${label}, round ${round}`, request('ev-paths.txt'), [a, b], request('ew-paths.txt')));
        await stopAll();
      }
    }
    const appendsDb = await pg.createDatabase({ name: 'gatehouse_appends' });
    await migratePostgres(appendsDb.url);
    const appends: Row[] = [];
    for (const round of [1, 2]) {
      for (const withLock of [false, true]) {
        log(`event appends at the database, ${withLock ? 'with' : 'without'} the advisory lock, round ${round} (${load()})`);
        const perSecond = await appendsPerSecond(appendsDb.url, withLock, settings.seconds);
        appends.push({ scenario: `Event-appending transactions at the database, 32 connections, ${withLock ? 'with the old advisory lock' : 'no lock (this build)'}, round ${round}`, perSecond, note: load() });
      }
    }
    const rate = (row: Row) => row.load?.requestsPerSecond ?? row.perSecond!;
    const meanRate = (rows: Row[]) => (rows.length === 0 ? 0 : mean(rows.map(rate)));
    const targets: Target[] = [target('verify-password, 2 pinned instances ÷ 1', rate(double) / rate(single), '≥', 1.8)];
    if (trees.length === 2) {
      const after = writes.filter((row) => row.scenario.includes('this build'));
      const old = writes.filter((row) => !row.scenario.includes('this build'));
      notes.push(`event-writing requests/s, mean of 2 rounds: ${meanRate(after).toFixed(0)} without the lock, ${meanRate(old).toFixed(0)} with it (${(meanRate(after) / meanRate(old)).toFixed(2)}×)`);
    }
    const lockless = appends.filter((row) => row.scenario.includes('no lock'));
    const locked = appends.filter((row) => !row.scenario.includes('no lock'));
    notes.push(`event-appending transactions/s at the database, mean of 2 rounds: ${meanRate(lockless).toFixed(0)} without the lock, ${meanRate(locked).toFixed(0)} with it (${(meanRate(lockless) / meanRate(locked)).toFixed(2)}×)`);
    return { rows: [single, double, ...writes, ...appends], targets, notes };
  } finally {
    await stopAll().catch(() => undefined);
    await Promise.all([pg.close(), redis.close()]);
  }
}
