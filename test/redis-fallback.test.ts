// API.md §10: with Redis unreachable, limits fall back to per-process ones (logged); when it returns, they move back.
import { afterEach, describe, expect, test } from 'bun:test';
import { createRateLimits, type LimitResult } from '../src/limits/rate-limit';
import { createSharedRateLimits } from '../src/limits/rate-limit-shared';
import { RedisKeyedLock } from '../src/limits/redis-keyed-lock';
import { RedisLink } from '../src/limits/redis-link';
import { redisForThisFile } from './support/redis';

const redis = await redisForThisFile('Redis outages');
const links: RedisLink[] = [];

afterEach(async () => {
  for (const link of links.splice(0)) link.close();
  if (redis.skip) return;
  redis.server().thaw();
  await redis.server().start();
}, 30_000);

/** `prefix`: the same for two links that stand for two instances of one deployment. */
function setup(options: { commandTimeoutMs?: number; prefix?: string } = {}) {
  const logs: Record<string, unknown>[] = [];
  const clock = () => 1_700_000_000_000;
  const link = new RedisLink({ url: redis.server().url, log: (fields) => logs.push(fields), probeIntervalMs: 100, commandTimeoutMs: options.commandTimeoutMs ?? 250 });
  links.push(link);
  const limits = createSharedRateLimits({ link, clock, local: createRateLimits(clock), prefix: options.prefix ?? `fallback:${links.length}:` });
  const messages = () => logs.map((line) => `${line.level}: ${line.message}`);
  return { link, limits, logs, messages };
}

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await Bun.sleep(10);
  }
};
const LOST = 'warn: Redis is unreachable: limits are per process until it is back';
const BACK = 'info: Redis is reachable again: limits are shared again';

describe.skipIf(redis.skip)('Redis killed and restarted while calls flow', () => {
  test('no call fails or waits, one line when Redis is lost and one when it is back, and limits move back', async () => {
    const { link, limits, messages } = setup();
    await link.start();
    const failures: unknown[] = [];
    let slowest = 0;
    let flowing = true;
    const flow = (async () => {
      for (let i = 0; flowing; i++) {
        const start = performance.now();
        await Promise.all([limits.address.consume(`ip-${i % 50}`), limits.loginBlock.check(`ip-${i % 50}`), limits.totpVerify.recordFailure(`user-${i % 50}`)]).catch((error) => failures.push(error));
        slowest = Math.max(slowest, performance.now() - start);
        await Bun.sleep(2);
      }
    })();
    await Bun.sleep(200);
    await redis.server().kill();
    await until(() => !link.available);
    // While Redis is down the per-process limits apply.
    const local: LimitResult[] = [];
    for (let i = 0; i < 6; i++) local.push(await limits.address.consume('down-ip'));
    expect(local.map((r) => r.ok)).toEqual([true, true, true, true, true, false]);
    await Bun.sleep(300);
    await redis.server().start();
    await until(() => link.available);
    await Bun.sleep(200);
    flowing = false;
    await flow;
    expect(failures).toEqual([]);
    // Limits never hold a request up past the 2 s in which the service answers even through outages (API.md §10).
    expect(slowest).toBeLessThan(2_000);
    expect(messages()).toEqual([LOST, BACK]);
    // Shared again: the limit is in Redis (which restarted empty, so the script was sent again).
    expect((await limits.address.consume('after-ip')).ok).toBe(true);
    expect(await link.send('KEYS', ['fallback:*address:after-ip'])).toHaveLength(1);
  });

  test('a hung Redis costs one call the command timeout; the next ones go local at once', async () => {
    const { link, limits, messages } = setup({ commandTimeoutMs: 200 });
    await link.start();
    expect((await limits.address.consume('ip')).ok).toBe(true);
    redis.server().freeze();
    let start = performance.now();
    expect((await limits.address.consume('ip')).ok).toBe(true);
    const first = performance.now() - start;
    expect(first).toBeGreaterThanOrEqual(190);
    expect(first).toBeLessThan(2_000);
    // The next call goes local at once: it settles before a timer of the command timeout, which a call
    // sent to the frozen Redis could not.
    const next = limits.loginBlock.check('ip').then(() => 'local');
    expect(await Promise.race([next, Bun.sleep(200).then(() => 'waited for Redis')])).toBe('local');
    expect(link.available).toBe(false);
    redis.server().thaw();
    await until(() => link.available);
    expect(messages()).toEqual([LOST, BACK]);
  });

  test('starting while Redis is down: per-process limits at once, shared when it comes up', async () => {
    await redis.server().kill();
    const { link, limits, messages } = setup();
    await link.start();
    expect(link.available).toBe(false);
    expect(messages()).toEqual([LOST]);
    expect((await limits.resetRequests.hit('user')).ok).toBe(true);
    await redis.server().start();
    await until(() => link.available);
    expect(messages()).toEqual([LOST, BACK]);
  });

  test('blocks and lockouts set while Redis was down are written back when it returns: other instances enforce them', async () => {
    const { link, limits } = setup({ prefix: 'write-back:' });
    await link.start();
    await redis.server().kill();
    await until(() => !link.available);
    // Five wrong passwords from one address and five wrong TOTP codes of one user, counted in this process only.
    const started = [];
    for (let i = 0; i < 5; i++) started.push((await limits.loginBlock.recordFailure('203.0.113.9')).locked, (await limits.totpVerify.recordFailure('user-9')).locked);
    expect(started.filter(Boolean)).toHaveLength(2);
    expect((await limits.loginBlock.check('203.0.113.9')).ok).toBe(false);
    await redis.server().start();
    await until(() => link.available);
    // Another instance, whose own process counted nothing, asks Redis.
    const other = setup({ prefix: 'write-back:' });
    await other.link.start();
    expect(other.link.available).toBe(true);
    // The test's clock stands still: the full 15 minutes are left.
    expect(await other.limits.loginBlock.check('203.0.113.9')).toEqual({ ok: false, retryAfterSeconds: 900 });
    expect(await other.limits.totpVerify.check('user-9')).toEqual({ ok: false, retryAfterSeconds: 900 });
    expect((await other.limits.loginBlock.check('203.0.113.10')).ok).toBe(true);
    expect(await limits.loginBlock.check('203.0.113.9')).toEqual({ ok: false, retryAfterSeconds: 900 });
  });

  test('the password-check lock runs tasks one at a time in this process while Redis is down', async () => {
    const { link } = setup();
    await link.start();
    const lock = new RedisKeyedLock(link, { prefix: 'fallback-lock:' });
    await redis.server().kill();
    const order: string[] = [];
    const task = (name: string) => async () => {
      order.push(`${name} in`);
      await Bun.sleep(20);
      order.push(`${name} out`);
    };
    await Promise.all([lock.run('addr', task('a')), lock.run('addr', task('b'))]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
  });
});
