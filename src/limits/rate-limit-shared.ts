import type { Clock } from '../security/clock';
import { assembleLimits, LIMIT_RULES, type CreationWindow, type FailureLockout, type LimitResult, type RateLimits, type TokenBucket } from './rate-limit';
import { RedisCreationWindow, RedisFailureLockout, RedisTokenBucket } from './rate-limit-redis';
import { RedisKeyedLock } from './redis-keyed-lock';
import { RedisUnavailableError, type RedisLink } from './redis-link';

/**
 * Clears both: Redis when it answers, and always the per-process twin, which would otherwise keep a
 * lock set during an outage and write it back to Redis when it returns.
 */
async function clearBoth(link: RedisLink, shared: () => Promise<void>, local: () => Promise<void>): Promise<void> {
  await local();
  if (!link.available) return;
  try {
    await shared();
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
  }
}

/** Asks Redis, or the per-process limiter when Redis is down or fails this call (API.md §10). */
async function sharedOrLocal<T>(link: RedisLink, shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
  if (!link.available) return local();
  try {
    return await shared();
  } catch (error) {
    if (error instanceof RedisUnavailableError) return local();
    throw error;
  }
}

export class FallbackTokenBucket implements TokenBucket {
  constructor(private readonly link: RedisLink, private readonly shared: TokenBucket, private readonly local: TokenBucket) {}
  consume(key: string): Promise<LimitResult> {
    return sharedOrLocal(this.link, () => this.shared.consume(key), () => this.local.consume(key));
  }
  clear(key: string): Promise<void> {
    return clearBoth(this.link, () => this.shared.clear(key), () => this.local.clear(key));
  }
}

export class FallbackCreationWindow implements CreationWindow {
  constructor(private readonly link: RedisLink, private readonly shared: CreationWindow, private readonly local: CreationWindow) {}
  hit(key: string): Promise<LimitResult> {
    return sharedOrLocal(this.link, () => this.shared.hit(key), () => this.local.hit(key));
  }
  clear(key: string): Promise<void> {
    return clearBoth(this.link, () => this.shared.clear(key), () => this.local.clear(key));
  }
}

export class FallbackFailureLockout implements FailureLockout {
  constructor(private readonly link: RedisLink, private readonly shared: RedisFailureLockout, private readonly local: FailureLockout) {}
  check(key: string): Promise<LimitResult> {
    return sharedOrLocal(this.link, () => this.shared.check(key), () => this.local.check(key));
  }
  recordFailure(key: string): Promise<{ locked: boolean }> {
    return sharedOrLocal(this.link, () => this.shared.recordFailure(key), () => this.local.recordFailure(key));
  }
  reset(key: string): Promise<void> {
    return sharedOrLocal(this.link, () => this.shared.reset(key), () => this.local.reset(key));
  }
  clear(key: string): Promise<void> {
    return clearBoth(this.link, () => this.shared.clear(key), () => this.local.clear(key));
  }
  /** The locks this process set while Redis was down, written to Redis so every instance enforces them. */
  async writeBack(): Promise<void> {
    const locks = (await this.local.activeLocks?.()) ?? [];
    await Promise.all(locks.map(([key, lockedUntil]) => this.shared.restoreLock(key, lockedUntil)));
  }
}

/**
 * The §5 limits in Redis (every key under `prefix`, e.g. `gatehouse:loginBlock:{1.2.3.4}:failures`),
 * each falling back to its twin in `local` while Redis is unreachable; and the keyed lock.
 */
export function createSharedRateLimits(options: { link: RedisLink; clock: Clock; local: RateLimits; prefix?: string }): RateLimits {
  const { link, clock, local } = options;
  const prefix = options.prefix ?? 'gatehouse:';
  const lockouts: FallbackFailureLockout[] = [];
  // Blocks and lockouts set while Redis was down would otherwise hold in this process only (API.md §10).
  link.onReturn(async () => {
    await Promise.all(lockouts.map((lockout) => lockout.writeBack()));
  });
  return assembleLimits({
    address: () => new FallbackTokenBucket(link, new RedisTokenBucket(link, { prefix: `${prefix}address:`, ...LIMIT_RULES.address, clock }), local.address),
    window: (name) => new FallbackCreationWindow(link, new RedisCreationWindow(link, { prefix: `${prefix}${name}:`, ...LIMIT_RULES.window, clock }), local[name]),
    lockout: (name) => {
      const lockout = new FallbackFailureLockout(link, new RedisFailureLockout(link, { prefix: `${prefix}${name}:`, ...LIMIT_RULES.lockout, clock }), local[name]);
      lockouts.push(lockout);
      return lockout;
    },
    serial: new RedisKeyedLock(link, { prefix: `${prefix}serial:` }),
  });
}
