import { describe, expect, test } from 'bun:test';
import { FailureLockout, SlidingWindowLimiter, TokenBucketLimiter } from '../src/limits/limiters';
import { createRateLimits } from '../src/limits/rate-limit';
import { addressKey } from '../src/limits/address-key';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const WINDOW = 15 * MINUTE;

function fakeClock(start = 1_700_000_000_000) {
  const time = { now: start };
  return { time, clock: () => time.now };
}

const refusedFor = (seconds: number) => ({ ok: false, retryAfterSeconds: seconds });

describe('TokenBucketLimiter', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    return { time, bucket: new TokenBucketLimiter({ capacity: 5, refillMs: 10 * SECOND, clock }) };
  };

  test('allows 5 then refuses with the time until the next token', () => {
    const { time, bucket } = setup();
    for (let i = 0; i < 5; i++) expect(bucket.consume('a')).toEqual({ ok: true });
    expect(bucket.consume('a')).toEqual(refusedFor(10));
    time.now += 3500;
    expect(bucket.consume('a')).toEqual(refusedFor(7));
    time.now += 6400;
    expect(bucket.consume('a')).toEqual(refusedFor(1));
  });

  test('refills exactly one token per 10 s', () => {
    const { time, bucket } = setup();
    for (let i = 0; i < 5; i++) bucket.consume('a');
    time.now += 10 * SECOND - 1;
    expect(bucket.consume('a').ok).toBe(false);
    time.now += 1;
    expect(bucket.consume('a')).toEqual({ ok: true });
    expect(bucket.consume('a')).toEqual(refusedFor(10));
    time.now += 20 * SECOND;
    expect(bucket.consume('a').ok).toBe(true);
    expect(bucket.consume('a').ok).toBe(true);
    expect(bucket.consume('a').ok).toBe(false);
  });

  test('a partial refill period is not lost when a token is spent', () => {
    const { time, bucket } = setup();
    for (let i = 0; i < 5; i++) bucket.consume('a');
    time.now += 15 * SECOND;
    expect(bucket.consume('a').ok).toBe(true);
    expect(bucket.consume('a')).toEqual(refusedFor(5));
  });

  test('does not exceed capacity after a long idle', () => {
    const { time, bucket } = setup();
    bucket.consume('a');
    time.now += 24 * 60 * MINUTE;
    for (let i = 0; i < 5; i++) expect(bucket.consume('a').ok).toBe(true);
    expect(bucket.consume('a').ok).toBe(false);
  });

  test('keys are independent', () => {
    const { bucket } = setup();
    for (let i = 0; i < 5; i++) bucket.consume('a');
    expect(bucket.consume('a').ok).toBe(false);
    expect(bucket.consume('b').ok).toBe(true);
  });
});

describe('SlidingWindowLimiter', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    return { time, window: new SlidingWindowLimiter({ limit: 3, windowMs: WINDOW, clock }) };
  };

  test('allows 3, refuses the 4th until the oldest leaves the window', () => {
    const { time, window } = setup();
    const first = time.now;
    expect(window.hit('u').ok).toBe(true);
    time.now += 5 * MINUTE;
    expect(window.hit('u').ok).toBe(true);
    time.now += 5 * MINUTE;
    expect(window.hit('u').ok).toBe(true);
    expect(window.hit('u')).toEqual(refusedFor(5 * 60));
    time.now = first + WINDOW - 1;
    expect(window.hit('u')).toEqual(refusedFor(1));
    time.now = first + WINDOW;
    expect(window.hit('u').ok).toBe(true);
    expect(window.hit('u')).toEqual(refusedFor(5 * 60));
  });

  test('refused hits are not counted', () => {
    const { time, window } = setup();
    for (let i = 0; i < 3; i++) window.hit('u');
    time.now += 10 * MINUTE;
    for (let i = 0; i < 10; i++) expect(window.hit('u').ok).toBe(false);
    time.now += 5 * MINUTE;
    for (let i = 0; i < 3; i++) expect(window.hit('u').ok).toBe(true);
  });

  test('keys are independent', () => {
    const { window } = setup();
    for (let i = 0; i < 3; i++) window.hit('u1');
    expect(window.hit('u1').ok).toBe(false);
    expect(window.hit('u2').ok).toBe(true);
  });
});

describe('FailureLockout', () => {
  const setup = () => {
    const { time, clock } = fakeClock();
    return { time, lockout: new FailureLockout({ limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock }) };
  };

  test('locks at the 5th failure, not the 4th', () => {
    const { lockout } = setup();
    for (let i = 0; i < 4; i++) lockout.recordFailure('k');
    expect(lockout.check('k')).toEqual({ ok: true });
    lockout.recordFailure('k');
    expect(lockout.check('k')).toEqual(refusedFor(15 * 60));
  });

  test('the lock lasts 15 min from the 5th failure', () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 4; i++) {
      lockout.recordFailure('k');
      time.now += 2 * MINUTE;
    }
    lockout.recordFailure('k');
    const fifth = time.now;
    time.now += 5 * MINUTE;
    expect(lockout.check('k')).toEqual(refusedFor(10 * 60));
    time.now = fifth + WINDOW - 1;
    expect(lockout.check('k')).toEqual(refusedFor(1));
    time.now = fifth + WINDOW;
    expect(lockout.check('k')).toEqual({ ok: true });
  });

  test('failures while locked do not extend the lock', () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 5; i++) lockout.recordFailure('k');
    time.now += 10 * MINUTE;
    lockout.recordFailure('k');
    expect(lockout.check('k')).toEqual(refusedFor(5 * 60));
  });

  test('failures older than the window do not count', () => {
    const { time, lockout } = setup();
    for (let i = 0; i < 4; i++) lockout.recordFailure('k');
    time.now += WINDOW;
    lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(true);
    for (let i = 0; i < 3; i++) lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(true);
    lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(false);
  });

  test('a failure just inside the window still counts', () => {
    const { time, lockout } = setup();
    lockout.recordFailure('k');
    time.now += WINDOW - 1;
    for (let i = 0; i < 4; i++) lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(false);
  });

  test('reset clears the failures', () => {
    const { lockout } = setup();
    for (let i = 0; i < 4; i++) lockout.recordFailure('k');
    lockout.reset('k');
    for (let i = 0; i < 4; i++) lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(true);
    lockout.recordFailure('k');
    expect(lockout.check('k').ok).toBe(false);
  });

  test('check records nothing', () => {
    const { lockout } = setup();
    for (let i = 0; i < 20; i++) expect(lockout.check('k').ok).toBe(true);
    expect(lockout.size).toBe(0);
  });

  test('keys are independent', () => {
    const { lockout } = setup();
    for (let i = 0; i < 5; i++) lockout.recordFailure('a');
    expect(lockout.check('a').ok).toBe(false);
    expect(lockout.check('b').ok).toBe(true);
  });
});

describe('bounded memory', () => {
  const MAX = 1000;
  // The victim is touched every MAX / 2 keys, so it stays among the MAX most recently used.
  const flood = (touch: (key: string, touchVictim: boolean) => unknown) => {
    for (let i = 0; i < 1_000_000; i++) touch(`flood-${i}`, i % (MAX / 2) === 0);
  };

  test('token bucket', () => {
    const { clock } = fakeClock();
    const bucket = new TokenBucketLimiter({ capacity: 5, refillMs: 10 * SECOND, clock, maxKeys: MAX });
    flood((key, touchVictim) => {
      if (touchVictim) for (let i = 0; i < 6; i++) bucket.consume('victim');
      bucket.consume(key);
    });
    expect(bucket.size).toBeLessThanOrEqual(MAX);
    expect(bucket.consume('victim').ok).toBe(false);
    expect(bucket.consume('fresh').ok).toBe(true);
  });

  test('sliding window', () => {
    const { clock } = fakeClock();
    const window = new SlidingWindowLimiter({ limit: 3, windowMs: WINDOW, clock, maxKeys: MAX });
    flood((key, touchVictim) => {
      if (touchVictim) window.hit('victim');
      window.hit(key);
    });
    expect(window.size).toBeLessThanOrEqual(MAX);
    expect(window.hit('victim').ok).toBe(false);
  });

  test('lockout', () => {
    const { clock } = fakeClock();
    const lockout = new FailureLockout({ limit: 5, windowMs: WINDOW, lockMs: WINDOW, clock, maxKeys: MAX });
    flood((key, touchVictim) => {
      if (touchVictim) lockout.recordFailure('victim');
      lockout.recordFailure(key);
    });
    expect(lockout.size).toBeLessThanOrEqual(MAX);
    expect(lockout.check('victim').ok).toBe(false);
  });

  test('stale entries are dropped when encountered', () => {
    const { time, clock } = fakeClock();
    const window = new SlidingWindowLimiter({ limit: 3, windowMs: WINDOW, clock, maxKeys: MAX });
    for (let i = 0; i < 10; i++) window.hit(`old-${i}`);
    expect(window.size).toBe(10);
    time.now += WINDOW;
    for (let i = 0; i < 10; i++) expect(window.hit(`old-${i}`).ok).toBe(true);
    expect(window.size).toBe(10);
  });

  test('keys are dropped a whole generation at a time, never exceeding maxKeys', () => {
    const { clock } = fakeClock();
    const window = new SlidingWindowLimiter({ limit: 3, windowMs: WINDOW, clock, maxKeys: 10 });
    const sizes: number[] = [];
    for (let i = 0; i < 100; i++) {
      window.hit(`k-${i}`);
      sizes.push(window.size);
    }
    expect(Math.max(...sizes)).toBe(10);
    expect(Math.min(...sizes.slice(10))).toBe(6);
  });
});

describe('addressKey', () => {
  test('IPv6 addresses in the same /64 share a key however they are written', () => {
    const key = addressKey('2001:db8:abcd:12::1');
    expect(key).toBe('2001:db8:abcd:12::/64');
    expect(addressKey('2001:0DB8:ABCD:0012:ffff:0000:0000:0042')).toBe(key);
    expect(addressKey('[2001:db8:abcd:12:0::9]')).toBe(key);
    expect(addressKey('2001:db8:abcd:12::1%eth0')).toBe(key);
  });

  test('different /64s differ', () => {
    expect(addressKey('2001:db8:abcd:12::1')).not.toBe(addressKey('2001:db8:abcd:13::1'));
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  test('IPv4-mapped addresses are keyed by their IPv4 address', () => {
    expect(addressKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('::FFFF:c000:0201')).toBe('192.0.2.1');
    expect(addressKey('::ffff:192.0.2.1')).not.toBe(addressKey('::ffff:192.0.2.2'));
  });

  test('NAT64 addresses (64:ff9b::/96) are keyed by their embedded IPv4 address', () => {
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('64:ff9b::c000:201')).toBe('192.0.2.1');
    expect(addressKey('64:ff9b::192.0.2.2')).not.toBe(addressKey('64:ff9b::192.0.2.1'));
    expect(addressKey('64:ff9b:1::c000:201')).toBe('64:ff9b:1:0::/64');
  });

  test('IPv4 and other strings are unchanged', () => {
    for (const value of ['192.0.2.1', 'localhost', 'seed', '1:2:3', '1::2::3', '12345::', 'g::1', '1:2:3:4:5:6:7:8:9', '::1.2.3']) {
      expect(addressKey(value)).toBe(value);
    }
  });
});

describe('createRateLimits', () => {
  test('applies the API.md §5 rules', async () => {
    const { time, clock } = fakeClock();
    const limits = createRateLimits(clock);
    for (let i = 0; i < 5; i++) expect((await limits.address.consume('ip')).ok).toBe(true);
    expect(await limits.address.consume('ip')).toEqual(refusedFor(10));
    for (const window of [limits.resetRequests, limits.emailVerificationRequests, limits.emailUpdateRequests, limits.emailSignInRequests]) {
      for (let i = 0; i < 3; i++) expect((await window.hit('u')).ok).toBe(true);
      expect(await window.hit('u')).toEqual(refusedFor(15 * 60));
    }
    const lockouts = [limits.loginBlock, limits.totpVerify, limits.totpRegister, limits.reset2fa, limits.emailVerify, limits.emailUpdateVerify];
    for (const lockout of lockouts) {
      for (let i = 0; i < 4; i++) await lockout.recordFailure('u');
      expect((await lockout.check('u')).ok).toBe(true);
      await lockout.recordFailure('u');
      expect(await lockout.check('u')).toEqual(refusedFor(15 * 60));
    }
    time.now += 15 * MINUTE;
    expect((await Promise.all(lockouts.map((lockout) => lockout.check('u')))).every((result) => result.ok)).toBe(true);
  });

  test('the limiters are separate instances', async () => {
    const { clock } = fakeClock();
    const limits = createRateLimits(clock);
    for (let i = 0; i < 5; i++) await limits.totpVerify.recordFailure('u');
    expect((await limits.totpRegister.check('u')).ok).toBe(true);
    for (let i = 0; i < 3; i++) await limits.emailVerificationRequests.hit('u');
    expect((await limits.emailUpdateRequests.hit('u')).ok).toBe(true);
  });
});
