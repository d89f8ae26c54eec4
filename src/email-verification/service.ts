import { checkCode, newRequestTimes } from '../code-requests/service';
import { AppError } from '../errors';
import { draft, wrongCodeEvents } from '../events/model';
import { nowSeconds, type Clock } from '../security/clock';
import { generateOneTimeCode } from '../security/random';
import { enforce, type RateLimits } from '../limits/rate-limit';
import { toVerificationView, type VerificationView } from './model';
import type { EmailVerificationStore } from './store';
import { rejectDisabled } from '../users/model';
import type { UserRecord } from '../users/store';

export function createEmailVerificationService({ store, limits, clock }: { store: EmailVerificationStore; limits: RateLimits; clock: Clock }) {
  const now = () => nowSeconds(clock);
  return {
    /** Replaces any pending request with a new code and expiry; 3 per user in any 15 minutes. */
    async create(user: UserRecord): Promise<VerificationView> {
      const userId = user.id;
      rejectDisabled(user, now());
      enforce(await limits.emailVerificationRequests.hit(userId));
      const record = { userId, ...newRequestTimes(now()), failedAttempts: 0, code: generateOneTimeCode() };
      if (!(await store.replace(record))) throw new AppError('NOT_FOUND');
      return toVerificationView(record);
    },

    async get(userId: string): Promise<VerificationView> {
      const pending = await store.findLive(userId, now());
      if (pending === undefined) throw new AppError('NOT_FOUND');
      return toVerificationView(pending);
    },

    async delete(userId: string): Promise<void> {
      if (!(await store.deleteLive(userId, now()))) throw new AppError('NOT_FOUND');
    },

    /** No pending request is NOT_ALLOWED, told before the lockout; one check at a time per user. */
    verify: async (user: UserRecord, code: string): Promise<void> => {
      const userId = user.id;
      rejectDisabled(user, now());
      return limits.serial.run(`email-verify:${userId}`, async () => {
        const pending = await store.findLive(userId, now());
        if (pending === undefined) throw new AppError('NOT_ALLOWED');
        await checkCode({
          userId,
          lockout: limits.emailVerify,
          given: code,
          issued: pending.code,
          countWrongCode: (locked) => store.recordWrongCode(userId, now(), wrongCodeEvents(now(), userId, locked)),
        });
        if (!(await store.redeem(pending, now(), [draft('email.verified', now(), userId)]))) throw new AppError('NOT_ALLOWED');
      });
    },
  };
}
export type EmailVerificationService = ReturnType<typeof createEmailVerificationService>;
