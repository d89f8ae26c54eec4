import type { Clock } from './clock';

export type LimitResult = { ok: true } | { ok: false; retryAfterSeconds: number };

const ALLOWED: LimitResult = { ok: true };
const refuse = (waitMs: number): LimitResult => ({ ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
const DEFAULT_MAX_KEYS = 100_000;
/** Timestamps still inside the window: an event at t counts while now < t + windowMs. */
const inWindow = (times: number[], now: number, windowMs: number) => times.filter((t) => t > now - windowMs);

/**
 * A map capped at maxKeys with two generations: writes go to the young one; when it is half full it
 * becomes the old one and the previous old one is dropped whole. A key used within the last
 * maxKeys/2 new keys always survives. No per-call scan: iterating a Map from its head after many
 * deletes is linear in the deleted slots, which made a true LRU crawl under a flood of keys.
 */
class LruMap<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();
  constructor(private readonly maxKeys: number, private readonly isStale: (value: V) => boolean) {}

  get size(): number { return this.young.size + this.old.size; }

  get(key: string): V | undefined {
    const young = this.young.get(key);
    const value = young ?? this.old.get(key);
    if (value === undefined) return undefined;
    if (this.isStale(value)) {
      this.delete(key);
      return undefined;
    }
    if (young === undefined) this.set(key, value); // a read is a use: keep the key young
    return value;
  }

  set(key: string, value: V): void {
    this.old.delete(key);
    if (!this.young.has(key) && this.young.size >= Math.max(1, Math.floor(this.maxKeys / 2))) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  delete(key: string): void {
    this.young.delete(key);
    this.old.delete(key);
  }
}

type Bucket = { tokens: number; since: number };

export class TokenBucketLimiter {
  private readonly buckets: LruMap<Bucket>;

  constructor(private readonly opts: { capacity: number; refillMs: number; clock: Clock; maxKeys?: number }) {
    this.buckets = new LruMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, (b) => this.refill(b).tokens >= opts.capacity);
  }

  get size(): number { return this.buckets.size; }

  consume(key: string): LimitResult {
    const now = this.opts.clock();
    const bucket = this.refill(this.buckets.get(key) ?? { tokens: this.opts.capacity, since: now });
    if (bucket.tokens < 1) return refuse(bucket.since + this.opts.refillMs - now);
    // A full bucket has no refill in progress, so the refill period starts with this spend.
    const since = bucket.tokens >= this.opts.capacity ? now : bucket.since;
    this.buckets.set(key, { tokens: bucket.tokens - 1, since });
    return ALLOWED;
  }

  /** Adds whole tokens earned since `since`; the unfinished period stays in `since`. */
  private refill(bucket: Bucket): Bucket {
    const periods = Math.floor((this.opts.clock() - bucket.since) / this.opts.refillMs);
    if (periods <= 0) return bucket;
    return { tokens: Math.min(this.opts.capacity, bucket.tokens + periods), since: bucket.since + periods * this.opts.refillMs };
  }
}

export class SlidingWindowLimiter {
  private readonly logs: LruMap<number[]>;

  constructor(private readonly opts: { limit: number; windowMs: number; clock: Clock; maxKeys?: number }) {
    this.logs = new LruMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, (log) => inWindow(log, opts.clock(), opts.windowMs).length === 0);
  }

  get size(): number { return this.logs.size; }

  hit(key: string): LimitResult {
    const now = this.opts.clock();
    const log = inWindow(this.logs.get(key) ?? [], now, this.opts.windowMs);
    const oldest = log[0];
    if (log.length >= this.opts.limit && oldest !== undefined) {
      this.logs.set(key, log);
      return refuse(oldest + this.opts.windowMs - now);
    }
    this.logs.set(key, [...log, now]);
    return ALLOWED;
  }
}

type Failures = { times: number[]; lockedUntil: number };

export class FailureLockout {
  private readonly entries: LruMap<Failures>;

  constructor(private readonly opts: { limit: number; windowMs: number; lockMs: number; clock: Clock; maxKeys?: number }) {
    const isIdle = (e: Failures) => e.lockedUntil <= opts.clock() && inWindow(e.times, opts.clock(), opts.windowMs).length === 0;
    this.entries = new LruMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, isIdle);
  }

  get size(): number { return this.entries.size; }

  check(key: string): LimitResult {
    const now = this.opts.clock();
    const entry = this.entries.get(key);
    return entry && entry.lockedUntil > now ? refuse(entry.lockedUntil - now) : ALLOWED;
  }

  recordFailure(key: string): void {
    const now = this.opts.clock();
    const entry = this.entries.get(key) ?? { times: [], lockedUntil: 0 };
    // Failures while locked neither extend the lock nor count toward the next one.
    if (entry.lockedUntil > now) return this.entries.set(key, entry);
    const times = [...inWindow(entry.times, now, this.opts.windowMs), now];
    const locked = times.length >= this.opts.limit;
    this.entries.set(key, locked ? { times: [], lockedUntil: now + this.opts.lockMs } : { times, lockedUntil: 0 });
  }

  reset(key: string): void {
    const entry = this.entries.get(key);
    // An active lock stays: a success from a request that passed check() before the lock must not lift it.
    if (entry && entry.lockedUntil > this.opts.clock()) this.entries.set(key, { times: [], lockedUntil: entry.lockedUntil });
    else this.entries.delete(key);
  }
}

export interface RateLimits {
  address: TokenBucketLimiter;
  loginBlock: FailureLockout;
  resetRequests: SlidingWindowLimiter;
  emailVerificationRequests: SlidingWindowLimiter;
  emailUpdateRequests: SlidingWindowLimiter;
  totpVerify: FailureLockout;
  totpRegister: FailureLockout;
  reset2fa: FailureLockout;
  emailVerify: FailureLockout;
  emailUpdateVerify: FailureLockout;
}

const FIFTEEN_MINUTES = 15 * 60 * 1000;

/** The limits of API.md §5. */
export function createRateLimits(clock: Clock, maxKeys?: number): RateLimits {
  const window = () => new SlidingWindowLimiter({ limit: 3, windowMs: FIFTEEN_MINUTES, clock, maxKeys });
  const lockout = () => new FailureLockout({ limit: 5, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES, clock, maxKeys });
  return {
    address: new TokenBucketLimiter({ capacity: 5, refillMs: 10_000, clock, maxKeys }),
    loginBlock: lockout(),
    resetRequests: window(),
    emailVerificationRequests: window(),
    emailUpdateRequests: window(),
    totpVerify: lockout(),
    totpRegister: lockout(),
    reset2fa: lockout(),
    emailVerify: lockout(),
    emailUpdateVerify: lockout(),
  };
}
