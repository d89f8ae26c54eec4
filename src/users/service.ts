import { AppError } from '../errors';
import { draft } from '../events/model';
import { newRecoveryCode } from '../recovery-code/service';
import { rejectBreached, type BreachChecker } from '../security/breach-check';
import { normalizeEmail } from '../security/email-address';
import { nowSeconds, type Clock } from '../security/clock';
import type { PasswordHasher } from '../security/password-hash';
import { generateId } from '../security/random';
import { spendAddressToken, type RateLimits } from '../security/rate-limit';
import type { CreatedUserView, ListOptions } from './model';
import type { UserStore } from './store';

export interface UsersDeps {
  store: UserStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  limits: RateLimits;
  clock: Clock;
}

export function createUsersService({ store, hasher, breach, limits, clock }: UsersDeps) {
  return {
    view: (id: string) => store.findView(id),
    find: (id: string) => store.find(id),
    list: (options: ListOptions) => store.list(options),
    /** Requests, TOTP credential and everything else of the user go with it. */
    async delete(id: string): Promise<void> {
      // A user deleted by a parallel request meanwhile: that request wrote the event.
      await store.delete(id, [draft('user.deleted', nowSeconds(clock), id)]);
    },

    /** Both hashes are computed before the insert. */
    async create(input: { password: string; email: string | null; clientIp: string | null }): Promise<CreatedUserView> {
      const email = input.email === null ? null : normalizeEmail(input.email);
      await spendAddressToken(limits, input.clientIp);
      await rejectBreached(breach, input.password);
      if (email !== null && (await store.findByEmail(email))) throw new AppError('EMAIL_ALREADY_USED');
      const [passwordHash, recoveryCode] = await Promise.all([hasher.hash(input.password), newRecoveryCode(hasher)]);
      const user = {
        id: generateId(),
        createdAt: nowSeconds(clock),
        email,
        emailVerified: false,
        passwordHash,
        recoveryCodeHash: recoveryCode.hash,
      };
      if (!(await store.insert(user, [draft('user.created', user.createdAt, user.id, input.clientIp)]))) throw new AppError('EMAIL_ALREADY_USED');
      return {
        id: user.id,
        created_at: user.createdAt,
        email: user.email,
        email_verified: false,
        registered_totp: false,
        passkey_count: 0,
        recovery_code: recoveryCode.code,
      };
    },
  };
}
export type UsersService = ReturnType<typeof createUsersService>;
/** Looks a user up by id, for the path checks of every feature's routes. */
export type FindUser = UsersService['find'];
