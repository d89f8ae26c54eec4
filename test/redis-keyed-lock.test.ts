// The per-address serialisation of password checks, across instances, through Redis.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { RedisKeyedLock } from '../src/limits/redis-keyed-lock';
import { RedisLink } from '../src/limits/redis-link';
import { redisForThisFile } from './support/redis';

const redis = await redisForThisFile('keyed lock in Redis');
let instanceA: RedisLink;
let instanceB: RedisLink;
let prefixes = 0;
const freshPrefix = () => `lock-test:${++prefixes}:`;

beforeAll(async () => {
  if (redis.skip) return;
  instanceA = new RedisLink({ url: redis.server().url, log: () => {} });
  instanceB = new RedisLink({ url: redis.server().url, log: () => {} });
  await Promise.all([instanceA.start(), instanceB.start()]);
}, 30_000);

afterAll(() => {
  instanceA?.close();
  instanceB?.close();
});

/** A task that records when it ran, to check that tasks of one key never overlap. */
function recorder() {
  const spans: { name: string; start: number; end: number }[] = [];
  const task = (name: string, ms: number) => async () => {
    const start = performance.now();
    await Bun.sleep(ms);
    spans.push({ name, start, end: performance.now() });
    return name;
  };
  const overlaps = () => {
    const sorted = [...spans].sort((a, b) => a.start - b.start);
    return sorted.slice(1).filter((span, i) => span.start < sorted[i]!.end).length;
  };
  return { spans, task, overlaps };
}

const setCalls = async () => {
  const info = (await instanceA.send('INFO', ['commandstats'])) as string;
  return Number(/cmdstat_set:calls=(\d+)/.exec(info)?.[1] ?? 0);
};

describe.skipIf(redis.skip)('RedisKeyedLock', () => {
  test('tasks of one key from two instances run one at a time; other keys run alongside', async () => {
    const prefix = freshPrefix();
    const a = new RedisKeyedLock(instanceA, { prefix });
    const b = new RedisKeyedLock(instanceB, { prefix });
    const same = recorder();
    const other = recorder();
    const results = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).run('1.2.3.4', same.task(`t${i}`, 20))),
      b.run('5.6.7.8', other.task('other', 20)),
    ]);
    expect(results).toHaveLength(9);
    expect(same.spans).toHaveLength(8);
    expect(same.overlaps()).toBe(0);
    // The other key did not wait for the eight tasks: it started before the last of them ended.
    expect(other.spans[0]!.start).toBeLessThan(Math.max(...same.spans.map((s) => s.end)));
    expect(await instanceA.send('KEYS', [`${prefix}*`])).toEqual([]);
  });

  test('one instance queues its own tasks locally: one SET per task, no polling', async () => {
    const lock = new RedisKeyedLock(instanceA, { prefix: freshPrefix() });
    const { task, overlaps } = recorder();
    const before = await setCalls();
    await Promise.all(Array.from({ length: 10 }, (_, i) => lock.run('addr', task(`t${i}`, 5))));
    expect(await setCalls()).toBe(before + 10);
    expect(overlaps()).toBe(0);
  });

  test('a task that throws releases the lock and rejects with its error', async () => {
    const prefix = freshPrefix();
    const lock = new RedisKeyedLock(instanceA, { prefix });
    const failed = lock.run('addr', async () => {
      throw new Error('boom');
    });
    await expect(failed).rejects.toThrow('boom');
    expect(await instanceA.send('EXISTS', [`${prefix}addr`])).toBe(0); // send() returns the integer; only .exists() makes it a boolean
    expect(await new RedisKeyedLock(instanceB, { prefix }).run('addr', async () => 'next')).toBe('next');
  });

  test('a lock outlives its ttl while the owner still runs: the owner extends it', async () => {
    const prefix = freshPrefix();
    const a = new RedisKeyedLock(instanceA, { prefix, ttlMs: 300 });
    const b = new RedisKeyedLock(instanceB, { prefix, ttlMs: 300 });
    const { task, spans, overlaps } = recorder();
    const first = a.run('addr', task('long', 1000));
    await Bun.sleep(50);
    await Promise.all([first, b.run('addr', task('second', 1))]);
    expect(spans.map((s) => s.name)).toEqual(['long', 'second']);
    expect(overlaps()).toBe(0);
  });

  test('the lock of an owner that died expires after its ttl', async () => {
    const prefix = freshPrefix();
    // What a killed instance leaves behind.
    await instanceA.send('SET', [`${prefix}addr`, 'dead-owner', 'PX', '400']);
    const start = performance.now();
    await new RedisKeyedLock(instanceB, { prefix }).run('addr', async () => undefined);
    const waited = performance.now() - start;
    expect(waited).toBeGreaterThanOrEqual(350);
    // Far below the 10 s default ttl a lock taken by this process would have had.
    expect(waited).toBeLessThan(5_000);
  });

  test('an instance killed while it holds a lock (default lease): another takes it within 2 s', async () => {
    const prefix = freshPrefix();
    // A real process holding the lock with the defaults, as a serving instance does during a check.
    const holder = Bun.spawn(
      [process.execPath, '-e', `
        const { RedisLink } = await import(${JSON.stringify(`${import.meta.dir}/../src/limits/redis-link.ts`)});
        const { RedisKeyedLock } = await import(${JSON.stringify(`${import.meta.dir}/../src/limits/redis-keyed-lock.ts`)});
        const link = new RedisLink({ url: ${JSON.stringify(redis.server().url)}, log: () => {} });
        await link.start();
        void new RedisKeyedLock(link, { prefix: ${JSON.stringify(prefix)} }).run('addr', () => { console.log('held'); return new Promise(() => {}); });
      `],
      { stdout: 'pipe', stderr: 'inherit' },
    );
    const reader = holder.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('held');
    // Held past its first lease: the live holder renews it, so a waiter cannot take it.
    await Bun.sleep(2_000);
    expect(await instanceA.send('EXISTS', [`${prefix}addr`])).toBe(1);
    holder.kill('SIGKILL');
    await holder.exited;
    const start = performance.now();
    await new RedisKeyedLock(instanceB, { prefix }).run('addr', async () => undefined);
    expect(performance.now() - start).toBeLessThan(2_000);
  }, 30_000);

  test('only the owner releases: a lock taken over by another owner is left alone', async () => {
    const prefix = freshPrefix();
    await new RedisKeyedLock(instanceA, { prefix }).run('addr', async () => {
      // As if ours had expired and another instance had taken the key.
      await instanceB.send('SET', [`${prefix}addr`, 'someone-else', 'PX', '5000']);
    });
    expect(await instanceA.send('GET', [`${prefix}addr`])).toBe('someone-else');
    await instanceA.send('DEL', [`${prefix}addr`]);
  });
});
