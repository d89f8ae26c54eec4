import { AppError } from '../errors';
import { isDisabled, rejectDisabled } from '../users/model';
import type { UserRecord } from '../users/store';
import { draft, wrongCodeEvents } from '../events/model';
import type { EventStore } from '../events/store';
import { nowSeconds, toUnixSeconds, type Clock } from '../security/clock';
import { enforce, type FailureLockout, type RateLimits } from '../limits/rate-limit';
import { encodeTotpKey, matchingStep, parseTotpKey } from '../security/totp';
import { toTotpCredentialView, type TotpCredentialView } from './model';
import type { TotpStore } from './store';

function storedKey(stored: string): Uint8Array {
  const key = parseTotpKey(stored);
  if (key === undefined) throw new Error('stored TOTP key is not 20 bytes of base64');
  return key;
}

export function createTotpService({ store, limits, clock, events }: { store: TotpStore; limits: RateLimits; clock: Clock; events: EventStore }) {
  /** Registrations and verifications of one user run one at a time, from the lockout check to the count. */
  const oneAtATime = <T>(userId: string, task: () => Promise<T>) => limits.serial.run(`totp:${userId}`, task);
  const wrongCode = async (lockout: FailureLockout, userId: string): Promise<never> => {
    const { locked } = await lockout.recordFailure(userId);
    await events.append(wrongCodeEvents(nowSeconds(clock), userId, locked));
    throw new AppError('INCORRECT_CODE');
  };

  return {
    /** `key` is what the caller sent as key (or its alias totp_key). Replaces an existing credential. */
    async register(user: UserRecord, input: { key: string | undefined; code: string }): Promise<TotpCredentialView> {
      const userId = user.id;
      const key = parseTotpKey(input.key);
      if (key === undefined) throw new AppError('INVALID_DATA');
      rejectDisabled(user, nowSeconds(clock));
      const lockout = limits.totpRegister;
      return oneAtATime(userId, async () => {
        enforce(await lockout.check(userId));
        const now = clock();
        const step = matchingStep(key, input.code, now);
        if (step === undefined) return wrongCode(lockout, userId);
        await lockout.reset(userId);
        // The registering code's step counts as used, so that code cannot verify a login afterwards.
        const record = { userId, createdAt: toUnixSeconds(now), key: encodeTotpKey(key), lastUsedStep: step };
        // The state is read again where the key is written: a disable answered meanwhile wins (API.md §14).
        const saved = await store.save(record, [draft('totp.registered', record.createdAt, userId)], (state) => isDisabled(state, nowSeconds(clock)));
        if (saved === 'gone') throw new AppError('NOT_FOUND');
        if (saved === 'refused') throw new AppError('USER_DISABLED');
        return toTotpCredentialView(record);
      });
    },

    async get(userId: string): Promise<TotpCredentialView> {
      const record = await store.find(userId);
      if (record === undefined) throw new AppError('NOT_FOUND');
      return toTotpCredentialView(record);
    },

    async delete(userId: string): Promise<void> {
      if (!(await store.delete(userId, [draft('totp.removed', nowSeconds(clock), userId)]))) throw new AppError('NOT_FOUND');
    },

    async verify(user: UserRecord, code: string): Promise<void> {
      const userId = user.id;
      rejectDisabled(user, nowSeconds(clock));
      const lockout = limits.totpVerify;
      return oneAtATime(userId, async () => {
        const credential = await store.find(userId);
        if (credential === undefined) throw new AppError('NOT_ALLOWED');
        enforce(await lockout.check(userId));
        const step = matchingStep(storedKey(credential.key), code, clock());
        if (step === undefined) return wrongCode(lockout, userId);
        // A replayed code is not a guess at the key, so it answers INCORRECT_CODE without counting.
        const claimed = await store.claimStep(userId, step, (state) => isDisabled(state, nowSeconds(clock)));
        if (claimed === 'refused') throw new AppError('USER_DISABLED');
        if (claimed === 'replayed') throw new AppError('INCORRECT_CODE');
        await lockout.reset(userId);
      });
    },
  };
}
export type TotpService = ReturnType<typeof createTotpService>;
