/** The in-process limiters of API.md §5, one process's memory each; rate-limit.ts puts them behind RateLimits. */
import { BoundedMap } from './bounded-map';
import type { Clock } from '../security/clock';

export type LimitResult = { ok: true } | { ok: false; retryAfterSeconds: number };

const ALLOWED: LimitResult = { ok: true };
const refuse = (waitMs: number): LimitResult => ({ ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
const DEFAULT_MAX_KEYS = 100_000;
/** Timestamps still inside the window: an event at t counts while now < t + windowMs. */
const inWindow = (times: number[], now: number, windowMs: number) => times.filter((t) => t > now - windowMs);

type Bucket = { tokens: number; since: number };

export class TokenBucketLimiter {
  private readonly buckets: BoundedMap<Bucket>;

  constructor(private readonly opts: { capacity: number; refillMs: number; clock: Clock; maxKeys?: number }) {
    this.buckets = new BoundedMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, (b) => this.refill(b).tokens >= opts.capacity);
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

  /** A full bucket is no entry at all. */
  clear(key: string): void {
    this.buckets.delete(key);
  }

  /** Adds whole tokens earned since `since`; the unfinished period stays in `since`. */
  private refill(bucket: Bucket): Bucket {
    const periods = Math.floor((this.opts.clock() - bucket.since) / this.opts.refillMs);
    if (periods <= 0) return bucket;
    return { tokens: Math.min(this.opts.capacity, bucket.tokens + periods), since: bucket.since + periods * this.opts.refillMs };
  }
}

export class SlidingWindowLimiter {
  private readonly logs: BoundedMap<number[]>;

  constructor(private readonly opts: { limit: number; windowMs: number; clock: Clock; maxKeys?: number }) {
    this.logs = new BoundedMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, (log) => inWindow(log, opts.clock(), opts.windowMs).length === 0);
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

  clear(key: string): void {
    this.logs.delete(key);
  }
}

type Failures = { times: number[]; lockedUntil: number };
const LOCKED = { locked: true } as const;
const NOT_LOCKED = { locked: false } as const;

export class FailureLockout {
  private readonly entries: BoundedMap<Failures>;

  constructor(private readonly opts: { limit: number; windowMs: number; lockMs: number; clock: Clock; maxKeys?: number }) {
    const isIdle = (e: Failures) => e.lockedUntil <= opts.clock() && inWindow(e.times, opts.clock(), opts.windowMs).length === 0;
    this.entries = new BoundedMap(opts.maxKeys ?? DEFAULT_MAX_KEYS, isIdle);
  }

  get size(): number { return this.entries.size; }

  check(key: string): LimitResult {
    const now = this.opts.clock();
    const entry = this.entries.get(key);
    return entry && entry.lockedUntil > now ? refuse(entry.lockedUntil - now) : ALLOWED;
  }

  /** `locked` is true only for the failure that started a lock, so a lock is reported once. */
  recordFailure(key: string): { locked: boolean } {
    const now = this.opts.clock();
    const entry = this.entries.get(key) ?? { times: [], lockedUntil: 0 };
    // Failures while locked neither extend the lock nor count toward the next one.
    if (entry.lockedUntil > now) {
      this.entries.set(key, entry);
      return NOT_LOCKED;
    }
    const times = [...inWindow(entry.times, now, this.opts.windowMs), now];
    const locked = times.length >= this.opts.limit;
    this.entries.set(key, locked ? { times: [], lockedUntil: now + this.opts.lockMs } : { times, lockedUntil: 0 });
    return locked ? LOCKED : NOT_LOCKED;
  }

  /** The keys locked now, with the end of each lock. */
  activeLocks(): [key: string, lockedUntil: number][] {
    const now = this.opts.clock();
    return [...this.entries.entries()].filter(([, entry]) => entry.lockedUntil > now).map(([key, entry]) => [key, entry.lockedUntil]);
  }

  /** Forgets the failures and ends an active lock. */
  clear(key: string): void {
    this.entries.delete(key);
  }

  reset(key: string): void {
    const entry = this.entries.get(key);
    // An active lock stays: a success from a request that passed check() before the lock must not lift it.
    if (entry && entry.lockedUntil > this.opts.clock()) this.entries.set(key, { times: [], lockedUntil: entry.lockedUntil });
    else this.entries.delete(key);
  }
}
