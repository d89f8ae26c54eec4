import { AppError } from '../errors';
import { normalizeCode } from '../security/digest';
import type { PasswordHasher } from '../security/password-hash';
import { generateRecoveryCode } from '../security/random';
import { enforce, type RateLimits } from '../security/rate-limit';
import type { UserRecord } from '../users/store';
import type { RecoveryCodeView } from './model';
import type { RecoveryCodeStore } from './store';

/** The code is shown once; only its argon2id hash is stored. */
export async function newRecoveryCode(hasher: PasswordHasher): Promise<{ code: string; hash: string }> {
  const code = generateRecoveryCode();
  return { code, hash: await hasher.hash(code) };
}

export function createRecoveryCodeService({ store, hasher, limits }: { store: RecoveryCodeStore; hasher: PasswordHasher; limits: RateLimits }) {
  return {
    async regenerate(user: UserRecord): Promise<RecoveryCodeView> {
      const next = await newRecoveryCode(hasher);
      if (!(await store.replace(user.id, next.hash))) throw new AppError('NOT_FOUND');
      return { recovery_code: next.code };
    },

    /** Drops the TOTP credential (if any) and rotates the code; one check at a time per user. */
    resetSecondFactors: (user: UserRecord, recoveryCode: string): Promise<RecoveryCodeView> =>
      limits.serial.run(`reset-2fa:${user.id}`, async () => {
        const lockout = limits.reset2fa;
        enforce(await lockout.check(user.id));
        // argon2 verification takes the same time whether or not the code matches.
        const verifiedHash = user.recoveryCodeHash;
        if (!(await hasher.verify(normalizeCode(recoveryCode), verifiedHash))) {
          await lockout.recordFailure(user.id);
          throw new AppError('INCORRECT_CODE');
        }
        await lockout.reset(user.id);
        const next = await newRecoveryCode(hasher);
        const outcome = await store.redeem(user.id, verifiedHash, next.hash);
        // Another request redeemed or rotated this code meanwhile, or the user was deleted.
        if (outcome === 'user_gone') throw new AppError('NOT_FOUND');
        if (outcome === 'code_changed') throw new AppError('INCORRECT_CODE');
        return { recovery_code: next.code };
      }),
  };
}
export type RecoveryCodeService = ReturnType<typeof createRecoveryCodeService>;
