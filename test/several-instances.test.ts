import { describe, expect, test } from 'bun:test';
import { postgresForThisFile } from './support/postgres';
import { redisForThisFile } from './support/redis';
import { startServer, tempDirsOfThisFile, type ServerProcess } from './support/server-process';

/**
 * API.md §10 with real processes: instances of `gatehouse serve` on one PostgreSQL and one Redis,
 * and what happens to them when PostgreSQL stops, Redis dies, or an instance is killed.
 */
const pg = await postgresForThisFile('several instances (PostgreSQL)');
const redis = await redisForThisFile('several instances (Redis)');
const skip = pg.skip || redis.skip;
const tempDir = tempDirsOfThisFile();
const SECRET = 'several-instances-secret-0123';
const PASSWORD = 'a long enough password 42';

async function instances(count: number, databaseUrl?: string): Promise<ServerProcess[]> {
  const url = databaseUrl ?? (await pg.server().freshDatabase()).url;
  const flags = ['--secret', SECRET, '--database-url', url, '--redis-url', redis.server().url];
  return Promise.all(Array.from({ length: count }, () => startServer({ dir: tempDir(), extraArgs: flags })));
}

/** The `ms` of the server's access lines for `method path`, once there are `count` of them (or after 5 s). */
async function accessLines(server: ServerProcess, method: string, path: string, count: number): Promise<number[]> {
  const lines = () => server.lines.filter((line) => line.method === method && line.path === path && typeof line.ms === 'number').map((line) => line.ms as number);
  for (let i = 0; i < 250 && lines().length < count; i++) await Bun.sleep(20);
  return lines();
}
const json = async (res: Response) => ({ status: res.status, body: (await res.json().catch(() => undefined)) as any });
const createUser = async (on: ServerProcess, body: Record<string, unknown> = {}) => json(await on.request('POST', '/users', { password: PASSWORD, ...body }));
const timed = async <T>(work: () => Promise<T>) => {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
};

describe.skipIf(skip)('two instances on one PostgreSQL and Redis', () => {
  test('what one instance writes or counts, the other sees', async () => {
    const [a, b] = (await instances(2)) as [ServerProcess, ServerProcess];
    const user = (await createUser(a, { email: 'shared@example.com' })).body;
    expect((await json(await b.request('GET', `/users/${user.id}`))).body.email).toBe('shared@example.com');
    expect((await createUser(b, { email: 'shared@example.com' })).body).toEqual({ error: 'EMAIL_ALREADY_USED' });
    // Five wrong passwords from one address, spread over both, block that address on both.
    for (const on of [a, b, a, b, a]) expect((await json(await on.request('POST', `/users/${user.id}/verify-password`, { password: 'not the password 1', client_ip: '198.51.100.9' }))).body).toEqual({ error: 'INCORRECT_PASSWORD' });
    expect((await json(await b.request('POST', `/users/${user.id}/verify-password`, { password: PASSWORD, client_ip: '198.51.100.9' }))).body).toEqual({ error: 'TOO_MANY_REQUESTS' });
    // Of parallel redemptions of one reset code across both instances exactly one succeeds.
    const reset = (await json(await a.request('POST', `/users/${user.id}/password-reset-requests`, {}))).body;
    const redemptions = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).request('POST', '/reset-password', { request_id: reset.id, password: `new password number ${i}!` })),
    );
    expect(redemptions.map((res) => res.status).sort()).toEqual([204, ...Array(9).fill(400)]);
    await Promise.all([a.stop(), b.stop()]);
  }, 60_000);

  test('SIGKILL of one instance under load: the other keeps serving, and nothing acknowledged is lost', async () => {
    const [a, b] = (await instances(2)) as [ServerProcess, ServerProcess];
    const acknowledged: string[] = [];
    // Every answer of the survivor, and whatever went wrong asking it: it must all be 2xx.
    const survivorAnswers: (number | string)[] = [];
    let stop = false;
    const load = async (on: ServerProcess, survivor: boolean) => {
      while (!stop) {
        const res = await createUser(on).catch((error: unknown) => (survivor ? String(error) : undefined));
        if (survivor) survivorAnswers.push(typeof res === 'string' ? res : res!.status);
        if (typeof res === 'object' && res.status === 200) acknowledged.push(res.body.id);
      }
    };
    const loads = [load(a, false), load(b, true)];
    await Bun.sleep(700);
    await a.stop('SIGKILL');
    const countAfterKill = acknowledged.length;
    const survivorBeforeKill = survivorAnswers.length;
    await Bun.sleep(700);
    stop = true;
    await Promise.all(loads);
    expect(survivorAnswers.filter((answer) => typeof answer !== 'number' || answer < 200 || answer > 299)).toEqual([]);
    expect(survivorAnswers.length).toBeGreaterThan(survivorBeforeKill);
    expect(acknowledged.length).toBeGreaterThan(countAfterKill);
    for (const id of acknowledged) expect((await b.request('GET', `/users/${id}`)).status).toBe(200);
    await b.stop();
  }, 60_000);
});

describe.skipIf(skip)('outages', () => {
  test('PostgreSQL stopped while requests flow: 503 UNAVAILABLE within 2 s, then service resumes by itself; nothing acknowledged is lost', async () => {
    const database = await pg.server().freshDatabase();
    const [a] = (await instances(1, database.url)) as [ServerProcess];
    const acknowledged: string[] = [];
    const answers: { status: number; ms: number }[] = [];
    let stop = false;
    const load = async () => {
      while (!stop) {
        const { value, ms } = await timed(() => createUser(a));
        answers.push({ status: value.status, ms });
        if (value.status === 200) acknowledged.push(value.body.id);
        else expect(value.body).toEqual({ error: 'UNAVAILABLE' });
      }
    };
    const loads = [load(), load()];
    await Bun.sleep(500);
    await pg.server().stop('fast');
    try {
      await Bun.sleep(1500);
      const health = await timed(async () => (await fetch(`${a.url}/health`)).status);
      expect(health.value).toBe(503);
      expect(await accessLines(a, 'GET', '/health', 1)).toEqual([expect.any(Number)]);
      expect((await accessLines(a, 'GET', '/health', 1))[0]!).toBeLessThan(2000);
    } finally {
      await pg.server().start();
    }
    const restarted = answers.length;
    for (let i = 0; i < 100 && !answers.slice(restarted).some((answer) => answer.status === 200); i++) await Bun.sleep(50);
    stop = true;
    await Promise.all(loads);
    expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
    expect(answers.slice(restarted).some((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.status !== 200 && answer.status !== 503)).toEqual([]);
    // Within 2 s (API.md §10) on the server's own clock, its access lines: the test process's time
    // adds its own scheduling, which a 200 ms margin over the server's 1,800 ms deadline cannot absorb.
    const served = await accessLines(a, 'POST', '/users', answers.length);
    expect(served.length).toBe(answers.length);
    expect(Math.max(...served)).toBeLessThan(2000);
    for (const id of acknowledged) expect((await a.request('GET', `/users/${id}`)).status).toBe(200);
    expect((await fetch(`${a.url}/health`)).status).toBe(200);
    await a.stop();
  }, 90_000);

  test('Redis killed while requests flow: no 5xx, limits keep applying per instance, and move back when it returns', async () => {
    const [a] = (await instances(1)) as [ServerProcess];
    const user = (await createUser(a)).body;
    const attempt = (ip: string) => a.request('POST', `/users/${user.id}/verify-password`, { password: PASSWORD, client_ip: ip });
    await redis.server().kill();
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await attempt('198.51.100.50')).status);
      // Five tokens per address, counted in this process now: the sixth is refused.
      expect(statuses).toEqual([204, 204, 204, 204, 204, 400]);
      expect(a.lines.some((line) => line.message === 'Redis is unreachable: limits are per process until it is back')).toBe(true);
    } finally {
      await redis.server().start();
    }
    // Back on Redis (empty after the restart): a fresh address has its five tokens there again.
    let statuses: number[] = [];
    for (let round = 0; round < 40; round++) {
      await Bun.sleep(100);
      if (!a.lines.some((line) => line.message === 'Redis is reachable again: limits are shared again')) continue;
      statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await attempt('198.51.100.51')).status);
      break;
    }
    expect(statuses).toEqual([204, 204, 204, 204, 204, 400]);
    await a.stop();
  }, 90_000);

  test('start-up with PostgreSQL unreachable stops with one line and exit code 2', async () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/gatehouse';
    const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts', 'serve', '--port', '0', '--secret', SECRET, '--database-url', unreachable], {
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('--database-url');
  }, 30_000);
});
