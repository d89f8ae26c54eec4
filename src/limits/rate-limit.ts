import { AppError } from '../errors';
import { addressKey } from './address-key';
import type { Clock } from '../security/clock';
import { KeyedSerializer } from './keyed-serializer';
import { FailureLockout as LockoutLimiter, type LimitResult, SlidingWindowLimiter, TokenBucketLimiter } from './limiters';

export type { LimitResult };

/** Spends one token of a key's bucket. */
export interface TokenBucket {
  consume(key: string): Promise<LimitResult>;
  /** Fills the key's bucket again (API.md §14, clear-address-limits). */
  clear(key: string): Promise<void>;
}
/** Counts one creation, refused once the window holds its limit. */
export interface CreationWindow {
  hit(key: string): Promise<LimitResult>;
  /** Forgets the creations counted for the key (API.md §14, clear-lockouts). */
  clear(key: string): Promise<void>;
}
/** Failures within a window lock the key for a while; see limiters.ts for the exact rules. */
export interface FailureLockout {
  check(key: string): Promise<LimitResult>;
  /** `locked`: this failure started a lock (true once per lock, for the event that reports it). */
  recordFailure(key: string): Promise<{ locked: boolean }>;
  reset(key: string): Promise<void>;
  /** Ends the key's lock too, unlike reset (API.md §14: support lifting a lockout). */
  clear(key: string): Promise<void>;
  /** The keys locked now and when each lock ends: the per-process ones, to write back to Redis when it returns. */
  activeLocks?(): Promise<[key: string, lockedUntil: number][]>;
}
/** Runs tasks with the same key one after another. */
export interface KeyedLock {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

/**
 * The limits and lockouts of API.md §5, plus `serial`: checks that read a lockout, await a slow
 * judgement and then count a failure run one at a time per key, or parallel guesses could all pass
 * the lockout before the first failure is counted.
 */
export interface RateLimits {
  address: TokenBucket;
  loginBlock: FailureLockout;
  resetRequests: CreationWindow;
  emailVerificationRequests: CreationWindow;
  emailUpdateRequests: CreationWindow;
  /** Creations of email sign-in requests (API.md §15). */
  emailSignInRequests: CreationWindow;
  totpVerify: FailureLockout;
  totpRegister: FailureLockout;
  reset2fa: FailureLockout;
  emailVerify: FailureLockout;
  emailUpdateVerify: FailureLockout;
  /** Failed passkey second factors (API.md §13). */
  passkeyVerify: FailureLockout;
  serial: KeyedLock;
}

const FIFTEEN_MINUTES = 15 * 60 * 1000;

/** The numbers of API.md §5, for every implementation (in memory, in Redis). */
export const LIMIT_RULES = {
  address: { capacity: 5, refillMs: 10_000 },
  window: { limit: 3, windowMs: FIFTEEN_MINUTES },
  lockout: { limit: 5, windowMs: FIFTEEN_MINUTES, lockMs: FIFTEEN_MINUTES },
} as const;

const WINDOWS = ['resetRequests', 'emailVerificationRequests', 'emailUpdateRequests', 'emailSignInRequests'] as const;
const LOCKOUTS = ['loginBlock', 'totpVerify', 'totpRegister', 'reset2fa', 'emailVerify', 'emailUpdateVerify', 'passkeyVerify'] as const;
export type WindowName = (typeof WINDOWS)[number];
export type LockoutName = (typeof LOCKOUTS)[number];

/** RateLimits from one maker per kind of limit, so every implementation has every limit of §5. */
export function assembleLimits(make: {
  address: () => TokenBucket;
  window: (name: WindowName) => CreationWindow;
  lockout: (name: LockoutName) => FailureLockout;
  serial: KeyedLock;
}): RateLimits {
  return {
    address: make.address(),
    ...Object.fromEntries(WINDOWS.map((name) => [name, make.window(name)])),
    ...Object.fromEntries(LOCKOUTS.map((name) => [name, make.lockout(name)])),
    serial: make.serial,
  } as RateLimits;
}

/** The limits of API.md §5 in this process's memory, each map bounded by `maxKeys`. */
export function createRateLimits(clock: Clock, maxKeys?: number): RateLimits {
  return assembleLimits({
    address: () => {
      const bucket = new TokenBucketLimiter({ ...LIMIT_RULES.address, clock, maxKeys });
      return { consume: async (key) => bucket.consume(key), clear: async (key) => bucket.clear(key) };
    },
    window: () => {
      const limiter = new SlidingWindowLimiter({ ...LIMIT_RULES.window, clock, maxKeys });
      return { hit: async (key) => limiter.hit(key), clear: async (key) => limiter.clear(key) };
    },
    lockout: () => {
      const limiter = new LockoutLimiter({ ...LIMIT_RULES.lockout, clock, maxKeys });
      return {
        check: async (key) => limiter.check(key),
        recordFailure: async (key) => limiter.recordFailure(key),
        reset: async (key) => limiter.reset(key),
        clear: async (key) => limiter.clear(key),
        activeLocks: async () => limiter.activeLocks(),
      };
    },
    serial: new KeyedSerializer(),
  });
}

/** A refusal becomes TOO_MANY_REQUESTS with its Retry-After (API.md §2). */
export function enforce(result: LimitResult): void {
  if (!result.ok) throw new AppError('TOO_MANY_REQUESTS', result.retryAfterSeconds);
}

/** Every endpoint that takes client_ip spends one token of that address's bucket (API.md §5). */
export async function spendAddressToken(limits: RateLimits, clientIp: string | null): Promise<void> {
  if (clientIp !== null) enforce(await limits.address.consume(addressKey(clientIp)));
}

/** Ends every per-user lockout and limit of §5 for the user: second-factor lockouts and creation windows (API.md §14). */
export async function clearUserLimits(limits: RateLimits, userId: string): Promise<void> {
  const perUser = [...WINDOWS, ...LOCKOUTS.filter((name) => name !== 'loginBlock')];
  await Promise.all(perUser.map((name) => limits[name].clear(userId)));
}

/** Empties the address's login block and refills its bucket, under the key every address limit uses (API.md §9, §14). */
export async function clearAddressLimits(limits: RateLimits, clientIp: string): Promise<void> {
  const key = addressKey(clientIp);
  await Promise.all([limits.address.clear(key), limits.loginBlock.clear(key)]);
}

/** Each limit by the name it has in metrics and logs. */
export const LIMIT_NAMES = {
  address: 'address',
  loginBlock: 'login_block',
  resetRequests: 'reset_requests',
  emailVerificationRequests: 'email_verification_requests',
  emailUpdateRequests: 'email_update_requests',
  emailSignInRequests: 'email_sign_in_requests',
  totpVerify: 'totp_verify',
  totpRegister: 'totp_register',
  reset2fa: 'reset_2fa',
  emailVerify: 'email_verify',
  emailUpdateVerify: 'email_update_verify',
  passkeyVerify: 'passkey_verify',
} as const satisfies Record<Exclude<keyof RateLimits, 'serial'>, string>;
export type LimitName = (typeof LIMIT_NAMES)[keyof typeof LIMIT_NAMES];

/**
 * The same limits, telling `onRefusal` the name of every limit that refuses. Each call looks its
 * limit up in `limits` again, so a caller that swaps what `limits` holds (the tests) is followed.
 */
export function countRefusals(limits: RateLimits, onRefusal: (name: LimitName) => void): RateLimits {
  const counted = (name: LimitName, result: LimitResult) => {
    if (!result.ok) onRefusal(name);
    return result;
  };
  return assembleLimits({
    address: () => ({ consume: async (key) => counted('address', await limits.address.consume(key)), clear: (key) => limits.address.clear(key) }),
    window: (field) => ({ hit: async (key) => counted(LIMIT_NAMES[field], await limits[field].hit(key)), clear: (key) => limits[field].clear(key) }),
    lockout: (field) => ({
      check: async (key) => counted(LIMIT_NAMES[field], await limits[field].check(key)),
      recordFailure: (key) => limits[field].recordFailure(key),
      reset: (key) => limits[field].reset(key),
      clear: (key) => limits[field].clear(key),
    }),
    serial: { run: (key, task) => limits.serial.run(key, task) },
  });
}
