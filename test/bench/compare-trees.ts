/**
 * `bun test/bench/compare-trees.ts BEFORE AFTER [ROUNDS]`: two checkouts of Gatehouse (git worktrees),
 * each served by its own code on a fresh directory of 1,000 users seeded by its own seeding code, loaded
 * alternately with the same wrk settings as `bun run bench`: GET /users/{id} (CPU µs per request, which
 * drifts least on a shared machine) and verify-password (requests/s). Rounds interleave the two trees
 * so a neighbour's load falls on both. Used for the reshaping of issue 12 (docs/benchmarks.md).
 * `COMPARE_ON=postgres`: both trees serve one seeded PostgreSQL database with Redis limits instead.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SQL } from 'bun';
import { migratePostgres } from '../../src/db/pg-client';
import { startPostgres } from '../support/postgres';
import { startRedis } from '../support/redis';
import { seedPostgres } from './several';
import { cpuTicks, waitForIdle } from './proc';
import { mean } from './report';
import { ensureWrk, runWrk, type Request } from './wrk';

const [before, after, rounds = '3'] = process.argv.slice(2);
if (before === undefined || after === undefined) {
  console.error('usage: bun test/bench/compare-trees.ts BEFORE_TREE AFTER_TREE [ROUNDS]');
  process.exit(2);
}
const trees = { before: resolve(before), after: resolve(after) };
const SECRET = 'bench-secret-0123456789';
const PASSWORD = 'bench password 0123';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);

interface Sample {
  getCpuUs: number;
  verifyRps: number;
}

/** One database for both trees (their migrations must agree): the flags to serve it and a seeded user. */
async function sharedPostgres() {
  const [pg, redis] = await Promise.all([startPostgres(), startRedis()]);
  const database = await pg.createDatabase({ name: 'gatehouse_compare' });
  await migratePostgres(database.url);
  const admin = new SQL({ url: database.url, max: 1 });
  const [userId] = await seedPostgres(admin, await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 }));
  await admin.close();
  return { flags: ['--database-url', database.url, '--redis-url', redis.url], userId: userId!, stop: () => Promise.all([pg.close(), redis.close()]) };
}
const onPostgres = process.env.COMPARE_ON === 'postgres' ? await sharedPostgres() : null;

async function measureTree(root: string): Promise<Sample> {
  const { startGatehouse } = await import(join(root, 'test/bench/server.ts'));
  const { seedUsers } = await import(join(root, 'test/bench/seed.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-compare-'));
  try {
    const hash = await Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });
    const userId = onPostgres?.userId ?? seedUsers(join(dir, 'data'), 1000, hash).sampleIds[0];
    const server = await startGatehouse(join(dir, 'data'), SECRET, onPostgres?.flags ?? []);
    const headers = { authorization: SECRET, 'content-type': 'application/json' };
    const measure = async (request: Request) => {
      await runWrk(request, { connections: 32, threads: 2, seconds: 1 });
      await waitForIdle(server.pid);
      const ticks = cpuTicks(server.pid);
      const result = await runWrk(request, { connections: 32, threads: 2, seconds });
      const cpuUs = ((cpuTicks(server.pid) - ticks) * 10_000) / result.requests;
      await waitForIdle(server.pid);
      if (result.errors > 0) throw new Error(`${root}: ${result.errors} errors under load`);
      return { rps: result.requestsPerSecond, cpuUs };
    };
    const get = await measure({ url: `${server.baseUrl}/users/${userId}`, headers });
    const verify = await measure({ url: `${server.baseUrl}/users/${userId}/verify-password`, method: 'POST', headers, body: JSON.stringify({ password: PASSWORD }) });
    await server.stop();
    return { getCpuUs: get.cpuUs, verifyRps: verify.rps };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

ensureWrk();
const samples: Record<keyof typeof trees, Sample[]> = { before: [], after: [] };
for (let round = 1; round <= Number(rounds); round++) {
  for (const name of ['before', 'after'] as const) {
    const sample = await measureTree(trees[name]);
    samples[name].push(sample);
    console.log(`round ${round} ${name}: GET /users/{id} ${sample.getCpuUs.toFixed(1)} CPU µs/request; verify-password ${sample.verifyRps.toFixed(1)} requests/s`);
  }
}
const of = (name: keyof typeof trees, key: keyof Sample) => mean(samples[name].map((s) => s[key]));
for (const name of ['before', 'after'] as const) {
  console.log(`${name} (${trees[name]}): GET /users/{id} ${of(name, 'getCpuUs').toFixed(1)} CPU µs/request; verify-password ${of(name, 'verifyRps').toFixed(1)} requests/s`);
}
console.log(`after ÷ before: GET CPU µs ${(of('after', 'getCpuUs') / of('before', 'getCpuUs')).toFixed(3)}, verify-password requests/s ${(of('after', 'verifyRps') / of('before', 'verifyRps')).toFixed(3)}`);
await onPostgres?.stop();
