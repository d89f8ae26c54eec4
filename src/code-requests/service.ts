import { AppError } from '../errors';
import type { Logger } from '../http/log';
import { toUnixSeconds, type Clock } from '../security/clock';
import { codeMatches, constantTimeEqual, normalizeCode, sha256Hex } from '../security/digest';
import { enforce, type FailureLockout } from '../limits/rate-limit';
import { startBatchSweeper, type StoppableSweeper, SWEEP_BATCH_SIZE } from '../sweeps/batch-sweeper';
import { REQUEST_KINDS, type CodeRequestStore } from './store';

/** Password reset, email verification, email update and email sign-in requests all live 10 minutes (API.md §3, §15). */
const REQUEST_LIFETIME_SECONDS = 10 * 60;

export const newRequestTimes = (nowSeconds: number) => ({
  createdAt: nowSeconds,
  expiresAt: nowSeconds + REQUEST_LIFETIME_SECONDS,
});

/**
 * Codes shown once and stored only as a hash (password reset, email sign-in: API.md §7): SHA-256 of
 * the upper-cased code, as codes are case-insensitive.
 */
export const hashCode = (code: string): string => sha256Hex(normalizeCode(code));

/** Whether `given` is the code whose hash is stored, in constant time. */
export const matchesCodeHash = (given: string, storedHash: string): boolean => constantTimeEqual(hashCode(given), storedHash);

export interface CodeAttempt {
  userId: string;
  /** The per-user lockout of this endpoint. */
  lockout: FailureLockout;
  given: string;
  issued: string;
  /**
   * Counts the wrong code on the request itself (its 5th invalidates it), with the events of this
   * wrong code; `locked` says whether it just locked the user's lockout.
   */
  countWrongCode: (locked: boolean) => Promise<unknown>;
}

/**
 * The user's lockout of this endpoint, then the code. A wrong code counts on the request and toward
 * the lockout, and answers INCORRECT_CODE; a correct one clears the lockout (API.md §9).
 */
export async function checkCode(attempt: CodeAttempt): Promise<void> {
  const { lockout, userId } = attempt;
  enforce(await lockout.check(userId));
  if (codeMatches(attempt.given, attempt.issued)) {
    await lockout.reset(userId);
    return;
  }
  // The lockout first, so the wrong code's events know whether it locked.
  const { locked } = await lockout.recordFailure(userId);
  await attempt.countWrongCode(locked);
  throw new AppError('INCORRECT_CODE');
}

export interface SweepOptions {
  batchSize?: number;
  /** Stop after this many non-empty batches; the rest waits for the next call. */
  maxBatches?: number;
}

/**
 * Deletes the expired rows of every request kind (passkey challenges too) in batches and answers how many it deleted.
 * A request is expired once `expires_at <= now`, the same rule the endpoints apply.
 */
export async function sweepExpired(store: CodeRequestStore, nowMs: number, options: SweepOptions = {}): Promise<number> {
  const batchSize = options.batchSize ?? SWEEP_BATCH_SIZE;
  let budget = options.maxBatches ?? Infinity;
  const nowSeconds = toUnixSeconds(nowMs);
  let deleted = 0;
  for (const kind of REQUEST_KINDS) {
    while (budget > 0) {
      const n = await store.deleteExpired(kind, nowSeconds, batchSize);
      if (n === 0) break;
      deleted += n;
      budget--;
      if (n < batchSize) break;
    }
  }
  return deleted;
}

/** The expired requests' sweep, every intervalMs (see startBatchSweeper). */
export function startSweeper(deps: { store: CodeRequestStore; clock: Clock; log: Logger }, intervalMs = 60_000): StoppableSweeper {
  return startBatchSweeper(
    { ...deps, what: 'expired requests', sweepBatch: (nowMs) => sweepExpired(deps.store, nowMs, { maxBatches: 1 }) },
    intervalMs,
  );
}
