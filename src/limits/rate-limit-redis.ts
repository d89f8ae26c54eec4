// The limits of API.md §5 kept in Redis, so every instance enforces one limit (§10). Each check is
// one Lua script or one command, run atomically by Redis. `now` comes from the injected clock, so
// the rules are exactly those of rate-limit.ts (and tests with a fake clock work); instances are
// assumed to keep their clocks in step (NTP), well within a second.
import type { Clock } from '../security/clock';
import type { CreationWindow, FailureLockout, LimitResult, TokenBucket } from './rate-limit';
import { RedisScript, type RedisLink } from './redis-link';

const ALLOWED: LimitResult = { ok: true };
/** A script's answer: 0 allowed, otherwise the milliseconds to wait (at least 1, so a refusal never reads as 0). */
const fromWait = (waitMs: number): LimitResult => (waitMs <= 0 ? ALLOWED : { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });
/**
 * Added to every TTL. Keys expire on Redis's clock while the rules use the injected one; the margin
 * keeps a key a little past the moment the rules stop needing it.
 */
const TTL_MARGIN_MS = 1000;

// A full bucket has no refill in progress, so the refill period starts with the spend that empties it
// a little; whole periods since `since` add tokens, the unfinished one stays in `since`. Refusals store nothing.
const CONSUME_TOKEN = new RedisScript(`
local now, capacity, refill, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'since')
local tokens, since = tonumber(stored[1]), tonumber(stored[2])
if tokens == nil then tokens, since = capacity, now end
local periods = math.floor((now - since) / refill)
if periods > 0 then
  tokens = math.min(capacity, tokens + periods)
  since = since + periods * refill
end
if tokens < 1 then return math.max(1, since + refill - now) end
if tokens >= capacity then since = now end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tokens, 'since', since)
redis.call('PEXPIRE', KEYS[1], math.max(1, since + (capacity - tokens) * refill - now) + margin)
return 0`);

export class RedisTokenBucket implements TokenBucket {
  constructor(private readonly link: RedisLink, private readonly opts: { prefix: string; capacity: number; refillMs: number; clock: Clock }) {}

  async consume(key: string): Promise<LimitResult> {
    const wait = await CONSUME_TOKEN.run(this.link, [this.opts.prefix + key], [this.opts.clock(), this.opts.capacity, this.opts.refillMs, TTL_MARGIN_MS]);
    return fromWait(Number(wait));
  }

  async clear(key: string): Promise<void> {
    await this.link.send('DEL', [this.opts.prefix + key]);
  }
}

// An event at t counts while now < t + window. Members are unique, so two events in one millisecond both count.
const HIT_WINDOW = new RedisScript(`
local now, limit, window, member, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window - now)
end
redis.call('ZADD', KEYS[1], now, member)
redis.call('PEXPIRE', KEYS[1], window + margin)
return 0`);

export class RedisCreationWindow implements CreationWindow {
  constructor(private readonly link: RedisLink, private readonly opts: { prefix: string; limit: number; windowMs: number; clock: Clock }) {}

  async hit(key: string): Promise<LimitResult> {
    const now = this.opts.clock();
    const wait = await HIT_WINDOW.run(this.link, [this.opts.prefix + key], [now, this.opts.limit, this.opts.windowMs, `${now}:${crypto.randomUUID()}`, TTL_MARGIN_MS]);
    return fromWait(Number(wait));
  }

  async clear(key: string): Promise<void> {
    await this.link.send('DEL', [this.opts.prefix + key]);
  }
}

// KEYS[1] holds the lock's end, KEYS[2] the failures in the window. Failures while locked neither
// extend the lock nor count toward the next one; the limit-th failure locks and clears the count.
const RECORD_FAILURE = new RedisScript(`
local now, limit, window, lockMs, member, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], tonumber(ARGV[6])
if tonumber(redis.call('GET', KEYS[1]) or '0') > now then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
redis.call('ZADD', KEYS[2], now, member)
if redis.call('ZCARD', KEYS[2]) >= limit then
  redis.call('DEL', KEYS[2])
  redis.call('SET', KEYS[1], now + lockMs, 'PX', lockMs + margin)
  return 1
end
redis.call('PEXPIRE', KEYS[2], window + margin)
return 0`);

// A lock set elsewhere (in a process's own limits while Redis was down) ends at ARGV[2], unless the
// one stored ends later; like a lock the script itself starts, it clears the failures counted.
const RESTORE_LOCK = new RedisScript(`
local now, lockedUntil, margin = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if lockedUntil <= now or tonumber(redis.call('GET', KEYS[1]) or '0') >= lockedUntil then return 0 end
redis.call('SET', KEYS[1], lockedUntil, 'PX', lockedUntil - now + margin)
redis.call('DEL', KEYS[2])
return 1`);

export class RedisFailureLockout implements FailureLockout {
  constructor(private readonly link: RedisLink, private readonly opts: { prefix: string; limit: number; windowMs: number; lockMs: number; clock: Clock }) {}

  /** `{key}` is a hash tag: both keys of one entry would land on one node of a cluster. */
  private keys(key: string): [lock: string, failures: string] {
    return [`${this.opts.prefix}{${key}}:locked`, `${this.opts.prefix}{${key}}:failures`];
  }

  async check(key: string): Promise<LimitResult> {
    const lockedUntil = Number((await this.link.send('GET', [this.keys(key)[0]])) ?? 0);
    return fromWait(lockedUntil - this.opts.clock());
  }

  /** `locked` is true only for the failure that started the lock (the script answers 1 then). */
  async recordFailure(key: string): Promise<{ locked: boolean }> {
    const now = this.opts.clock();
    const { limit, windowMs, lockMs } = this.opts;
    const started = await RECORD_FAILURE.run(this.link, this.keys(key), [now, limit, windowMs, lockMs, `${now}:${crypto.randomUUID()}`, TTL_MARGIN_MS]);
    return { locked: Number(started) === 1 };
  }

  /** Makes `key` locked until `lockedUntil` (a time of the injected clock), unless it already is for longer. */
  async restoreLock(key: string, lockedUntil: number): Promise<void> {
    await RESTORE_LOCK.run(this.link, this.keys(key), [this.opts.clock(), lockedUntil, TTL_MARGIN_MS]);
  }

  /** The lock and the failures in one command, so a failure counted meanwhile is either before it (gone) or after it (kept). */
  async clear(key: string): Promise<void> {
    await this.link.send('DEL', this.keys(key));
  }

  /** Clears the failures. An active lock stays: a success from a request that passed check() before the lock must not lift it. */
  async reset(key: string): Promise<void> {
    await this.link.send('DEL', [this.keys(key)[1]]);
  }
}
