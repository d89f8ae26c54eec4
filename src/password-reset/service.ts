import { hashCode, matchesCodeHash, newRequestTimes } from '../code-requests/service';
import { AppError } from '../errors';
import { draft } from '../events/model';
import { rejectBreached, type BreachChecker } from '../breach-check/checker';
import { nowSeconds, type Clock } from '../security/clock';
import type { PasswordHasher } from '../hashing/password-hash';
import { generateId, generateOneTimeCode } from '../security/random';
import { enforce, spendAddressToken, type RateLimits } from '../limits/rate-limit';
import { type CreatedResetRequestView, type ResetRequestView, toResetRequestView } from './model';
import type { PasswordResetStore, ResetRequestRecord } from './store';
import { createRevocations, isFirstProof } from '../first-proof/service';
import { isDisabled, rejectDisabled, type DisabledState } from '../users/model';
import type { UserRecord, UserStore } from '../users/store';

export interface PasswordResetDeps {
  store: PasswordResetStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  limits: RateLimits;
  clock: Clock;
  users: UserStore;
}

export function createPasswordResetService({ store, users, hasher, breach, limits, clock }: PasswordResetDeps) {
  const now = () => nowSeconds(clock);
  const revocations = createRevocations(hasher);
  return {
    findLive: (id: string) => store.findLive(id, now()),
    list: async (userId: string): Promise<ResetRequestView[]> => (await store.listLive(userId, now())).map(toResetRequestView),
    async invalidate(id: string): Promise<void> {
      // A parallel delete or redemption took it after the path check: that one answered.
      if (!(await store.delete(id))) throw new AppError('NOT_FOUND');
    },
    invalidateAllOf: (userId: string) => store.deleteAllOf(userId),

    async create(user: UserRecord, clientIp: string | null): Promise<CreatedResetRequestView> {
      const userId = user.id;
      rejectDisabled(user, now());
      await spendAddressToken(limits, clientIp);
      enforce(await limits.resetRequests.hit(userId));
      const code = generateOneTimeCode();
      const record = { id: generateId(), userId, ...newRequestTimes(now()), failedAttempts: 0, codeHash: hashCode(code), emailVerified: false };
      // The user was deleted after the path check.
      if (!(await store.insert(record))) throw new AppError('NOT_FOUND');
      return { ...toResetRequestView(record), code };
    },

    /** Every wrong code counts, also once the request is verified; the 5th invalidates it (API.md §9). */
    async verifyEmail(request: ResetRequestRecord, input: { code: string; clientIp: string | null }): Promise<void> {
      await spendAddressToken(limits, input.clientIp);
      if (matchesCodeHash(input.code, request.codeHash)) {
        if (!(await store.markVerified(request.id, now()))) throw new AppError('NOT_FOUND');
        return;
      }
      if ((await store.recordWrongCode(request.id, now())) === 'gone') throw new AppError('NOT_FOUND');
      throw new AppError('INCORRECT_CODE');
    },

    /**
     * Works on an open or a verified request (seed-spec, States). The slow hash happens before the
     * store's atomic redemption, which checks again that the request is still live.
     */
    async resetPassword(input: { requestId: string; password: string; clientIp: string | null }): Promise<void> {
      const request = await store.findLive(input.requestId, now());
      if (request === undefined) throw new AppError('INVALID_REQUEST');
      const owner = await users.find(request.userId);
      if (owner === undefined) throw new AppError('INVALID_REQUEST');
      rejectDisabled(owner, now());
      await spendAddressToken(limits, input.clientIp);
      await rejectBreached(breach, input.password);
      const passwordHash = await hasher.hash(input.password);
      // The reset also marks the email verified (seed-spec, States): that is part of password.reset.
      const reset = [draft('password.reset', now(), request.userId, input.clientIp)];
      // Checked again where the password is written: a disable answered during the hash wins (API.md §14).
      const refuses = (user: DisabledState) => isDisabled(user, now());
      // The address's first proof (API.md §15) also replaces the recovery code; the reset sets its own password.
      const revoke = () => revocations.prepare({ userId: request.userId, time: now(), clientIp: input.clientIp, replacePassword: false });
      let outcome = await store.redeem(input.requestId, now(), passwordHash, reset, refuses, isFirstProof(owner) ? await revoke() : undefined);
      if (outcome === 'unproven') outcome = await store.redeem(input.requestId, now(), passwordHash, reset, refuses, await revoke());
      if (outcome === 'refused') throw new AppError('USER_DISABLED');
      if (outcome !== 'reset') throw new AppError('INVALID_REQUEST');
    },
  };
}
export type PasswordResetService = ReturnType<typeof createPasswordResetService>;
