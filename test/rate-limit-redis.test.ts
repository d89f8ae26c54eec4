// The §5 limits in Redis keep the rules of the in-process ones (test/rate-limit.test.ts), across instances.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { FailureLockout, SlidingWindowLimiter, TokenBucketLimiter } from '../src/limits/limiters';
import { RedisCreationWindow, RedisFailureLockout, RedisTokenBucket } from '../src/limits/rate-limit-redis';
import { RedisLink } from '../src/limits/redis-link';
import { redisForThisFile } from './support/redis';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const WINDOW = 15 * MINUTE;
const redis = await redisForThisFile('rate limits in Redis');
const refusedFor = (seconds: number) => ({ ok: false, retryAfterSeconds: seconds });

/** Two "instances": each its own connection. */
let instanceA: RedisLink;
let instanceB: RedisLink;
let prefixes = 0;
const freshPrefix = () => `test:${process.pid}:${++prefixes}:`;

beforeAll(async () => {
  if (redis.skip) return;
  const log = () => {};
  instanceA = new RedisLink({ url: redis.server().url, log });
  instanceB = new RedisLink({ url: redis.server().url, log });
  await Promise.all([instanceA.start(), instanceB.start()]);
}, 30_000);

afterAll(() => {
  instanceA?.close();
  instanceB?.close();
});

function fakeClock(start = 1_700_000_000_000) {
  const time = { now: start };
  return { time, clock: () => time.now };
}

const keysUnder = async (prefix: string) => ((await instanceA.send('KEYS', [`${prefix}*`])) as string[]).sort();
const ttlOf = async (key: string) => Number(await instanceA.send('PTTL', [key]));

describe.skipIf(redis.skip)('RedisTokenBucket', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    const prefix = freshPrefix();
    const make = (link: RedisLink) => new RedisTokenBucket(link, { prefix, capacity: 5, refillMs: 10 * SECOND, clock });
    return { time, prefix, bucket: make(instanceA), other: make(instanceB) };
  };

  test('allows 5 then refuses with the time until the next token', async () => {
    const { time, bucket } = setup();
    for (let i = 0; i < 5; i++) expect(await bucket.consume('a')).toEqual({ ok: true });
    expect(await bucket.consume('a')).toEqual(refusedFor(10));
    time.now += 3500;
    expect(await bucket.consume('a')).toEqual(refusedFor(7));
    time.now += 6400;
    expect(await bucket.consume('a')).toEqual(refusedFor(1));
  });

  test('refills exactly one token per 10 s, keeping a partial period', async () => {
    const { time, bucket } = setup();
    for (let i = 0; i < 5; i++) await bucket.consume('a');
    time.now += 10 * SECOND - 1;
    expect((await bucket.consume('a')).ok).toBe(false);
    time.now += 1;
    expect(await bucket.consume('a')).toEqual({ ok: true });
    expect(await bucket.consume('a')).toEqual(refusedFor(10));
    time.now += 15 * SECOND;
    expect((await bucket.consume('a')).ok).toBe(true);
    expect(await bucket.consume('a')).toEqual(refusedFor(5));
  });

  test('a spend from a full bucket starts the refill period', async () => {
    const { time, bucket } = setup();
    await bucket.consume('a');
    time.now += 25 * SECOND; // full again since 15 s
    for (let i = 0; i < 5; i++) expect((await bucket.consume('a')).ok).toBe(true);
    expect(await bucket.consume('a')).toEqual(refusedFor(10));
  });

  test('does not exceed capacity after a long idle; keys are independent', async () => {
    const { time, bucket } = setup();
    await bucket.consume('a');
    time.now += 24 * 60 * MINUTE;
    for (let i = 0; i < 5; i++) expect((await bucket.consume('a')).ok).toBe(true);
    expect((await bucket.consume('a')).ok).toBe(false);
    expect((await bucket.consume('b')).ok).toBe(true);
  });

  test('two instances spend one bucket', async () => {
    const { bucket, other } = setup();
    for (let i = 0; i < 3; i++) expect((await bucket.consume('ip')).ok).toBe(true);
    for (let i = 0; i < 2; i++) expect((await other.consume('ip')).ok).toBe(true);
    expect(await other.consume('ip')).toEqual(refusedFor(10));
    expect(await bucket.consume('ip')).toEqual(refusedFor(10));
  });

  test('parallel spends from two instances never take more than 5 tokens', async () => {
    const { bucket, other } = setup();
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? bucket : other).consume('ip')));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
  });

  test('the key lives until the bucket would be full again, plus a second', async () => {
    const { time, prefix, bucket } = setup();
    for (let i = 0; i < 3; i++) await bucket.consume('ip');
    time.now += 4 * SECOND;
    expect(await keysUnder(prefix)).toEqual([`${prefix}ip`]);
    // Set at the last spend, with 3 tokens missing: 30 s, plus the margin.
    const ttl = await ttlOf(`${prefix}ip`);
    expect(ttl).toBeGreaterThan(29 * SECOND);
    expect(ttl).toBeLessThanOrEqual(31 * SECOND);
  });
});

describe.skipIf(redis.skip)('RedisCreationWindow', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    const prefix = freshPrefix();
    const make = (link: RedisLink) => new RedisCreationWindow(link, { prefix, limit: 3, windowMs: WINDOW, clock });
    return { time, prefix, window: make(instanceA), other: make(instanceB) };
  };

  test('allows 3, refuses the 4th until the oldest leaves the window', async () => {
    const { time, window } = setup();
    const first = time.now;
    expect((await window.hit('u')).ok).toBe(true);
    time.now += 5 * MINUTE;
    expect((await window.hit('u')).ok).toBe(true);
    time.now += 5 * MINUTE;
    expect((await window.hit('u')).ok).toBe(true);
    expect(await window.hit('u')).toEqual(refusedFor(5 * 60));
    time.now = first + WINDOW - 1;
    expect(await window.hit('u')).toEqual(refusedFor(1));
    time.now = first + WINDOW;
    expect((await window.hit('u')).ok).toBe(true);
    expect(await window.hit('u')).toEqual(refusedFor(5 * 60));
  });

  test('refused hits are not counted; two hits in one millisecond both count', async () => {
    const { time, window } = setup();
    for (let i = 0; i < 3; i++) expect((await window.hit('u')).ok).toBe(true);
    time.now += 10 * MINUTE;
    for (let i = 0; i < 10; i++) expect((await window.hit('u')).ok).toBe(false);
    time.now += 5 * MINUTE;
    for (let i = 0; i < 3; i++) expect((await window.hit('u')).ok).toBe(true);
    expect((await window.hit('u')).ok).toBe(false);
  });

  test('parallel creations from two instances: exactly 3 pass', async () => {
    const { window, other } = setup();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? window : other).hit('u')));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
  });

  test('the key lives for the window after the last creation, plus a second', async () => {
    const { prefix, window } = setup();
    await window.hit('u');
    const ttl = await ttlOf(`${prefix}u`);
    expect(ttl).toBeGreaterThan(WINDOW);
    expect(ttl).toBeLessThanOrEqual(WINDOW + SECOND);
  });
});

describe.skipIf(redis.skip)('RedisFailureLockout', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    const prefix = freshPrefix();
    const make = (link: RedisLink) => new RedisFailureLockout(link, { prefix, limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock });
    return { time, prefix, lockout: make(instanceA), other: make(instanceB) };
  };

  test('locks at the 5th failure for 15 min from it', async () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 4; i++) {
      await lockout.recordFailure('k');
      time.now += 2 * MINUTE;
    }
    expect(await lockout.check('k')).toEqual({ ok: true });
    await lockout.recordFailure('k');
    const fifth = time.now;
    expect(await lockout.check('k')).toEqual(refusedFor(15 * 60));
    time.now += 5 * MINUTE;
    expect(await lockout.check('k')).toEqual(refusedFor(10 * 60));
    time.now = fifth + WINDOW - 1;
    expect(await lockout.check('k')).toEqual(refusedFor(1));
    time.now = fifth + WINDOW;
    expect(await lockout.check('k')).toEqual({ ok: true });
  });

  test('failures while locked neither extend the lock nor count toward the next one', async () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 5; i++) await lockout.recordFailure('k');
    time.now += 10 * MINUTE;
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    expect(await lockout.check('k')).toEqual(refusedFor(5 * 60));
    time.now += 5 * MINUTE;
    expect((await lockout.check('k')).ok).toBe(true);
    await lockout.recordFailure('k');
    expect((await lockout.check('k')).ok).toBe(true);
  });

  test('failures older than the window do not count; one just inside does', async () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    time.now += WINDOW;
    await lockout.recordFailure('k');
    expect((await lockout.check('k')).ok).toBe(true);
    time.now += WINDOW - 1;
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    expect((await lockout.check('k')).ok).toBe(false);
  });

  test('reset clears the failures but keeps an active lock', async () => {
    const { lockout } = setup();
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    await lockout.reset('k');
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    expect((await lockout.check('k')).ok).toBe(true);
    await lockout.recordFailure('k');
    await lockout.reset('k');
    expect(await lockout.check('k')).toEqual(refusedFor(15 * 60));
  });

  test('check records nothing', async () => {
    const { prefix, lockout } = setup();
    for (let i = 0; i < 20; i++) expect((await lockout.check('k')).ok).toBe(true);
    expect(await keysUnder(prefix)).toEqual([]);
  });

  test('failures from two instances count together, in parallel too, and lock once', async () => {
    const { time, lockout, other } = setup();
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? lockout : other).recordFailure('k')));
    expect(await other.check('k')).toEqual(refusedFor(15 * 60));
    time.now += WINDOW;
    expect((await lockout.check('k')).ok).toBe(true);
    // The 7 failures past the 5th fell inside the lock: nothing carried over.
    await lockout.recordFailure('k');
    expect((await lockout.check('k')).ok).toBe(true);
  });

  test('keys expire: the failures a window after the last one, the lock when it ends, each plus a second', async () => {
    const { prefix, lockout } = setup();
    await lockout.recordFailure('k');
    expect(await keysUnder(prefix)).toEqual([`${prefix}{k}:failures`]);
    expect(await ttlOf(`${prefix}{k}:failures`)).toBeGreaterThan(WINDOW);
    for (let i = 0; i < 4; i++) await lockout.recordFailure('k');
    expect(await keysUnder(prefix)).toEqual([`${prefix}{k}:locked`]);
    const ttl = await ttlOf(`${prefix}{k}:locked`);
    expect(ttl).toBeGreaterThan(WINDOW);
    expect(ttl).toBeLessThanOrEqual(WINDOW + SECOND);
  });
});

describe.skipIf(redis.skip)('memory stays bounded', () => {
  test('keys disappear once the rules no longer need them', async () => {
    const prefix = freshPrefix();
    const clock = () => Date.now();
    const bucket = new RedisTokenBucket(instanceA, { prefix: `${prefix}b:`, capacity: 2, refillMs: 100, clock });
    const window = new RedisCreationWindow(instanceA, { prefix: `${prefix}w:`, limit: 3, windowMs: 100, clock });
    const lockout = new RedisFailureLockout(instanceA, { prefix: `${prefix}l:`, limit: 2, windowMs: 100, lockMs: 100, clock });
    for (let i = 0; i < 50; i++) {
      await bucket.consume(`ip-${i}`);
      await window.hit(`user-${i}`);
      await lockout.recordFailure(`user-${i}`);
      await lockout.recordFailure(`user-${i}`);
    }
    expect(await keysUnder(prefix)).toHaveLength(150);
    await Bun.sleep(1300); // 100 ms of rules + the 1 s margin
    expect(await keysUnder(prefix)).toEqual([]);
  });
});

describe.skipIf(redis.skip)('the same answers as the in-process limits', () => {
  // Random spends, hits, failures, resets and clock steps, applied to both; every answer must match.
  // Mostly one key; clock steps around the 10 s refill and the 15 min window.
  const step = fc.oneof(
    { arbitrary: fc.record({ op: fc.constantFrom('use', 'use', 'use', 'check', 'reset'), key: fc.constantFrom('a', 'a', 'a', 'b') }), weight: 3 },
    { arbitrary: fc.record({ op: fc.constant('wait'), ms: fc.integer({ min: 0, max: 25 * SECOND }) }), weight: 1 },
    // The edges: a refill period and the window, exactly and a millisecond either side.
    { arbitrary: fc.record({ op: fc.constant('wait'), ms: fc.constantFrom(1, 5 * SECOND, 10 * SECOND - 1, 10 * SECOND, 5 * MINUTE, WINDOW - 1, WINDOW) }), weight: 2 },
  );

  test('token bucket, creation window and failure lockout', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        const { time, clock } = fakeClock();
        const prefix = freshPrefix();
        const local = {
          bucket: new TokenBucketLimiter({ capacity: 5, refillMs: 10 * SECOND, clock }),
          window: new SlidingWindowLimiter({ limit: 3, windowMs: WINDOW, clock }),
          lockout: new FailureLockout({ limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock }),
        };
        const shared = {
          bucket: new RedisTokenBucket(instanceA, { prefix: `${prefix}bucket:`, capacity: 5, refillMs: 10 * SECOND, clock }),
          window: new RedisCreationWindow(instanceB, { prefix: `${prefix}window:`, limit: 3, windowMs: WINDOW, clock }),
          lockout: new RedisFailureLockout(instanceA, { prefix: `${prefix}lockout:`, limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock }),
        };
        for (const s of steps) {
          if (s.op === 'wait') {
            time.now += s.ms;
            continue;
          }
          const key = s.key;
          if (s.op === 'use') {
            expect(await shared.bucket.consume(key)).toEqual(local.bucket.consume(key));
            expect(await shared.window.hit(key)).toEqual(local.window.hit(key));
            await shared.lockout.recordFailure(key);
            local.lockout.recordFailure(key);
          } else if (s.op === 'reset') {
            await shared.lockout.reset(key);
            local.lockout.reset(key);
          }
          expect(await shared.lockout.check(key)).toEqual(local.lockout.check(key));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe.skipIf(redis.skip)('clearing (API.md §14: clear-lockouts, clear-address-limits)', () => {
  test('a bucket is full again, a window empty, a lockout unlocked with its failures gone, for every instance; other keys stay', async () => {
    const { clock } = fakeClock();
    const prefix = freshPrefix();
    const bucket = new RedisTokenBucket(instanceA, { prefix: `${prefix}a:`, capacity: 5, refillMs: 10 * SECOND, clock });
    const window = new RedisCreationWindow(instanceA, { prefix: `${prefix}w:`, limit: 3, windowMs: WINDOW, clock });
    const lockout = new RedisFailureLockout(instanceA, { prefix: `${prefix}l:`, limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock });
    const lockoutB = new RedisFailureLockout(instanceB, { prefix: `${prefix}l:`, limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock });
    for (const key of ['k', 'other']) {
      for (let i = 0; i < 5; i++) await bucket.consume(key);
      for (let i = 0; i < 3; i++) await window.hit(key);
      for (let i = 0; i < 5; i++) await lockout.recordFailure(key);
    }
    await Promise.all([bucket.clear('k'), window.clear('k'), lockoutB.clear('k')]);
    for (let i = 0; i < 5; i++) expect(await bucket.consume('k')).toEqual({ ok: true });
    for (let i = 0; i < 3; i++) expect(await window.hit('k')).toEqual({ ok: true });
    expect(await lockout.check('k')).toEqual({ ok: true });
    // The failures went with the lock: four more do not lock again, the fifth does.
    for (let i = 0; i < 4; i++) expect(await lockoutB.recordFailure('k')).toEqual({ locked: false });
    expect(await lockout.recordFailure('k')).toEqual({ locked: true });
    expect((await bucket.consume('other')).ok).toBe(false);
    expect((await window.hit('other')).ok).toBe(false);
    expect((await lockout.check('other')).ok).toBe(false);
  });
});
