import { AppError } from '../errors';
import { draft, wrongCodeEvents } from '../events/model';
import type { EventStore } from '../events/store';
import { nowSeconds, type Clock } from '../security/clock';
import { normalizeCode } from '../security/digest';
import type { PasswordHasher } from '../hashing/password-hash';
import { generateRecoveryCode } from '../security/random';
import { enforce, type RateLimits } from '../limits/rate-limit';
import { rejectDisabled } from '../users/model';
import type { UserRecord } from '../users/store';
import type { RecoveryCodeView } from './model';
import type { RecoveryCodeStore } from './store';

/** The code is shown once; only its argon2id hash is stored. */
export async function newRecoveryCode(hasher: PasswordHasher): Promise<{ code: string; hash: string }> {
  const code = generateRecoveryCode();
  return { code, hash: await hasher.hash(code) };
}

export interface RecoveryCodeDeps {
  store: RecoveryCodeStore;
  hasher: PasswordHasher;
  limits: RateLimits;
  events: EventStore;
  clock: Clock;
}

export function createRecoveryCodeService({ store, hasher, limits, events, clock }: RecoveryCodeDeps) {
  const now = () => nowSeconds(clock);
  return {
    async regenerate(user: UserRecord): Promise<RecoveryCodeView> {
      const next = await newRecoveryCode(hasher);
      if (!(await store.replace(user.id, next.hash, [draft('recovery_code.regenerated', now(), user.id)]))) throw new AppError('NOT_FOUND');
      return { recovery_code: next.code };
    },

    /** Drops the TOTP credential (if any) and rotates the code; one check at a time per user. */
    resetSecondFactors: async (user: UserRecord, recoveryCode: string): Promise<RecoveryCodeView> => {
      rejectDisabled(user, now());
      return limits.serial.run(`reset-2fa:${user.id}`, async () => {
        const lockout = limits.reset2fa;
        enforce(await lockout.check(user.id));
        // argon2 verification takes the same time whether or not the code matches.
        const verifiedHash = user.recoveryCodeHash;
        if (!(await hasher.verify(normalizeCode(recoveryCode), verifiedHash))) {
          const { locked } = await lockout.recordFailure(user.id);
          await events.append(wrongCodeEvents(now(), user.id, locked));
          throw new AppError('INCORRECT_CODE');
        }
        await lockout.reset(user.id);
        const next = await newRecoveryCode(hasher);
        // The code is rotated as part of its use: recovery_code.used says both.
        const used = (removedTotp: boolean) => [
          draft('recovery_code.used', now(), user.id),
          ...(removedTotp ? [draft('totp.removed', now(), user.id)] : []),
        ];
        const outcome = await store.redeem(user.id, verifiedHash, next.hash, used);
        // Another request redeemed or rotated this code meanwhile, or the user was deleted.
        if (outcome === 'user_gone') throw new AppError('NOT_FOUND');
        if (outcome === 'code_changed') throw new AppError('INCORRECT_CODE');
        return { recovery_code: next.code };
      });
    },
  };
}
export type RecoveryCodeService = ReturnType<typeof createRecoveryCodeService>;
