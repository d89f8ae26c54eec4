import { KeyedSerializer } from './keyed-serializer';
import type { KeyedLock } from './rate-limit';
import { RedisScript, RedisUnavailableError, type RedisLink } from './redis-link';

// Only the owner (the token it set) may release or extend a lock.
const RELEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);
const EXTEND = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

/**
 * The lease a lock is taken for. A live owner renews it every third of it, so its task may run much
 * longer (a check queued behind a busy hasher); an owner that died (a killed instance) stops renewing,
 * and its lock is gone at most this long after: other instances' checks for that address wait no more
 * (API.md §10 answers within 2 s). Renewal needs the owner's event loop to run twice a lease.
 */
export const LEASE_MS = 1_500;

export interface RedisKeyedLockOptions {
  prefix: string;
  /**
   * How long a lock outlives an owner that stopped without releasing it (a killed instance). The
   * owner extends it every ttlMs/3 while its task runs, so a task may take longer than this
   * (a password check queued behind a busy hasher) without losing the lock.
   */
  ttlMs?: number;
  /** Longest pause between two attempts to take a lock another instance holds. */
  maxPollMs?: number;
}

/**
 * KeyedLock across instances: tasks of one key queue in this process first (KeyedSerializer), so
 * only the head of each local queue asks Redis; it takes `SET key token NX PX ttl`, polling with a
 * growing pause while another instance holds it. When Redis is unreachable the lock is per process,
 * which is what the in-process limits give too (API.md §10).
 */
export class RedisKeyedLock implements KeyedLock {
  private readonly local = new KeyedSerializer();
  private readonly ttlMs: number;
  private readonly maxPollMs: number;

  constructor(private readonly link: RedisLink, private readonly opts: RedisKeyedLockOptions) {
    this.ttlMs = opts.ttlMs ?? LEASE_MS;
    this.maxPollMs = opts.maxPollMs ?? 20;
  }

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.local.run(key, async () => {
      const redisKey = this.opts.prefix + key;
      const token = await this.acquire(redisKey);
      if (token === undefined) return task();
      const keepAlive = setInterval(() => void EXTEND.run(this.link, [redisKey], [token, this.ttlMs]).catch(() => undefined), this.ttlMs / 3);
      try {
        return await task();
      } finally {
        clearInterval(keepAlive);
        // Unreleased (Redis down), it expires after ttlMs.
        await RELEASE.run(this.link, [redisKey], [token]).catch(() => undefined);
      }
    });
  }

  /** The token of the lock taken, or undefined when Redis is unreachable (run with the local lock only). */
  private async acquire(redisKey: string): Promise<string | undefined> {
    const token = crypto.randomUUID();
    for (let pause = 1; ; pause = Math.min(this.maxPollMs, pause * 2)) {
      try {
        if ((await this.link.send('SET', [redisKey, token, 'NX', 'PX', String(this.ttlMs)])) === 'OK') return token;
      } catch (error) {
        if (error instanceof RedisUnavailableError) return undefined;
        throw error;
      }
      await Bun.sleep(pause);
    }
  }
}
