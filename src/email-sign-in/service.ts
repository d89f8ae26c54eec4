import { hashCode, matchesCodeHash, newRequestTimes } from '../code-requests/service';
import { AppError } from '../errors';
import { draft } from '../events/model';
import type { EventStore } from '../events/store';
import { createRevocations } from '../first-proof/service';
import { countFailedLogin, guardLogin } from '../passwords/service';
import { nowSeconds, type Clock } from '../security/clock';
import { normalizeEmail } from '../security/email-address';
import type { PasswordHasher } from '../hashing/password-hash';
import { generateId, generateOneTimeCode } from '../security/random';
import { enforce, spendAddressToken, type RateLimits } from '../limits/rate-limit';
import { isDisabled, rejectDisabled, type DisabledState, type UserView } from '../users/model';
import type { UserStore } from '../users/store';
import { toSignInRequestView, type CreatedSignInRequestView, type SignInRequestView } from './model';
import type { EmailSignInStore, SignInRequestRecord } from './store';

export interface EmailSignInDeps {
  store: EmailSignInStore;
  users: UserStore;
  limits: RateLimits;
  events: EventStore;
  hasher: PasswordHasher;
  clock: Clock;
}

/** Sign in with an emailed code (API.md §15), on the code-request machinery every emailed code shares. */
export function createEmailSignInService({ store, users, limits, events, hasher, clock }: EmailSignInDeps) {
  const now = () => nowSeconds(clock);
  const revocations = createRevocations(hasher);

  /**
   * Counted on the request (its 5th wrong code invalidates it) with its event, then toward the
   * address's login block like a wrong password. A request gone meanwhile counts nothing.
   */
  async function refuseWrongCode(request: SignInRequestRecord, clientIp: string | null): Promise<never> {
    const time = now();
    const counted = await store.recordWrongCode(request.id, time, [draft('email_code.incorrect', time, request.userId, clientIp)]);
    if (counted === 'gone') throw new AppError('INVALID_REQUEST');
    if (await countFailedLogin(limits, clientIp)) await events.append([draft('address.blocked', time, request.userId, clientIp)]);
    throw new AppError('INCORRECT_CODE');
  }

  return {
    list: async (userId: string): Promise<SignInRequestView[]> => (await store.listLive(userId, now())).map(toSignInRequestView),
    deleteAllOf: (userId: string) => store.deleteAllOf(userId),

    /**
     * The address token is spent first, also for an address nobody holds, so probing addresses costs
     * what asking for a code does (as at /authenticate/password); then the user, right after it
     * whether it is disabled (API.md §14), then the user's own limit of creations.
     */
    async create(input: { email: string; clientIp: string | null }): Promise<CreatedSignInRequestView> {
      await spendAddressToken(limits, input.clientIp);
      const user = await users.findByEmail(normalizeEmail(input.email));
      if (user === undefined || user.email === null) throw new AppError('NOT_FOUND');
      rejectDisabled(user, now());
      enforce(await limits.emailSignInRequests.hit(user.id));
      const code = generateOneTimeCode();
      const record = { id: generateId(), userId: user.id, ...newRequestTimes(now()), failedAttempts: 0, email: user.email, codeHash: hashCode(code) };
      // The user was deleted after the lookup.
      if (!(await store.insert(record))) throw new AppError('NOT_FOUND');
      return { ...toSignInRequestView(record), email: record.email, code };
    },

    /**
     * INVALID_REQUEST, then the address's token and login block (checks from one address one at a
     * time, as for passwords), then the code. Success consumes the request and verifies the address.
     * Only a correct code learns of USER_DISABLED (API.md §14), decided in the redemption's own
     * transaction, so the request stays redeemable once the user is enabled.
     */
    async authenticate(input: { requestId: string; code: string; clientIp: string | null }): Promise<UserView> {
      const request = await store.findLive(input.requestId, now());
      if (request === undefined) throw new AppError('INVALID_REQUEST');
      return guardLogin(limits, input.clientIp, async () => {
        if (!matchesCodeHash(input.code, request.codeHash)) return refuseWrongCode(request, input.clientIp);
        // The address is verified by this very code: email_code.used says both.
        const used = [draft('email_code.used', now(), request.userId, input.clientIp)];
        const refuses = (user: DisabledState) => isDisabled(user, now());
        let outcome = await store.redeem(request, now(), used, refuses);
        if (outcome === 'unproven') {
          // The address's first proof (API.md §15): what replaces the unproven credentials, hashed outside the transaction.
          const revocation = await revocations.prepare({ userId: request.userId, time: now(), clientIp: input.clientIp, replacePassword: true });
          outcome = await store.redeem(request, now(), used, refuses, revocation);
        }
        if (outcome === 'gone') throw new AppError('INVALID_REQUEST');
        if (outcome === 'refused') throw new AppError('USER_DISABLED');
        const view = await users.findView(request.userId, now());
        if (view === undefined) throw new AppError('INVALID_REQUEST');
        // A disable answered between the redemption and this read: no sign-in for a user disabled by then.
        if (view.disabled) throw new AppError('USER_DISABLED');
        return view;
      });
    },
  };
}
export type EmailSignInService = ReturnType<typeof createEmailSignInService>;
