import { AppError } from '../errors';
import { draft } from '../events/model';
import { newRecoveryCode } from '../recovery-code/service';
import { rejectBreached, type BreachChecker } from '../breach-check/checker';
import { normalizeEmail } from '../security/email-address';
import { nowSeconds, type Clock } from '../security/clock';
import { parsePasswordHash } from '../hashing/formats';
import type { PasswordHasher } from '../hashing/password-hash';
import { generateId } from '../security/random';
import { clearAddressLimits, clearUserLimits, spendAddressToken, type RateLimits } from '../limits/rate-limit';
import type { EventStore } from '../events/store';
import { MAX_DISABLE_SECONDS, type CreatedUserView, type ListOptions, type UserView } from './model';
import type { UserStore } from './store';

export interface UsersDeps {
  store: UserStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  limits: RateLimits;
  events: EventStore;
  clock: Clock;
}

/** Exactly one of a password and an imported hash (API.md §11); both or neither is INVALID_DATA. */
function credentialOf(input: { password: string | undefined; passwordHash: string | undefined }) {
  if (input.password !== undefined && input.passwordHash === undefined) return { password: input.password, imported: undefined };
  if (input.passwordHash !== undefined && input.password === undefined) return { imported: input.passwordHash };
  throw new AppError('INVALID_DATA');
}

export function createUsersService({ store, hasher, breach, limits, events, clock }: UsersDeps) {
  /** A user deleted by a parallel request after the change is NOT_FOUND. */
  const viewOf = async (id: string): Promise<UserView> => {
    const view = await store.findView(id, nowSeconds(clock));
    if (view === undefined) throw new AppError('NOT_FOUND');
    return view;
  };
  return {
    view: (id: string) => store.findView(id, nowSeconds(clock)),
    /** `email` as stored (lookupEmail). */
    viewByEmail: (email: string) => store.findViewByEmail(email, nowSeconds(clock)),
    find: (id: string) => store.find(id),
    list: (options: ListOptions) => store.list(options, nowSeconds(clock)),
    /** Requests, TOTP credential and everything else of the user go with it. */
    async delete(id: string): Promise<void> {
      // A user deleted by a parallel request after the path check: that request answered 204 and wrote the event.
      if (!(await store.delete(id, [draft('user.deleted', nowSeconds(clock), id)]))) throw new AppError('NOT_FOUND');
    },

    /** `until` later than now and at most 10 years ahead (API.md §14); disabling again replaces it. */
    async disable(id: string, until: number | null): Promise<UserView> {
      const now = nowSeconds(clock);
      if (until !== null && (until <= now || until > now + MAX_DISABLE_SECONDS)) throw new AppError('INVALID_DATA');
      if (!(await store.disable(id, until, [draft('user.disabled', now, id)]))) throw new AppError('NOT_FOUND');
      return viewOf(id);
    },

    /** Enabling an enabled user (also one whose disabled_until has passed) answers it as it is, with no event. */
    async enable(id: string): Promise<UserView> {
      const now = nowSeconds(clock);
      if ((await store.enable(id, now, [draft('user.enabled', now, id)])) === 'gone') throw new AppError('NOT_FOUND');
      return viewOf(id);
    },

    /**
     * Every per-user lockout and limit of §5 ends (API.md §14). The limits live in memory or Redis, so
     * the event is appended once they are cleared: it never reports a clearing that did not happen.
     */
    async clearLockouts(id: string): Promise<void> {
      await clearUserLimits(limits, id);
      await events.append([draft('lockouts.cleared', nowSeconds(clock), id)]);
    },

    /** The address's login block and bucket (API.md §14); the event carries the address as sent. */
    async clearAddressLimits(clientIp: string): Promise<void> {
      await clearAddressLimits(limits, clientIp);
      await events.append([draft('address.cleared', nowSeconds(clock), null, clientIp)]);
    },

    /**
     * Both hashes are computed before the insert. An imported `passwordHash` (API.md §11) is stored
     * as given, without a breach check; the first correct password replaces it with argon2id.
     */
    async create(input: {
      password: string | undefined;
      passwordHash: string | undefined;
      email: string | null;
      clientIp: string | null;
    }): Promise<CreatedUserView> {
      const credential = credentialOf(input);
      const email = input.email === null ? null : normalizeEmail(input.email);
      await spendAddressToken(limits, input.clientIp);
      if (credential.imported === undefined) await rejectBreached(breach, credential.password);
      else if (parsePasswordHash(credential.imported) === undefined) throw new AppError('UNSUPPORTED_PASSWORD_HASH');
      if (email !== null && (await store.findByEmail(email))) throw new AppError('EMAIL_ALREADY_USED');
      const [passwordHash, recoveryCode] = await Promise.all([
        credential.imported ?? hasher.hash(credential.password),
        newRecoveryCode(hasher),
      ]);
      const user = {
        id: generateId(),
        createdAt: nowSeconds(clock),
        email,
        emailVerified: false,
        passwordHash,
        recoveryCodeHash: recoveryCode.hash,
        disabled: false,
        disabledUntil: null,
      };
      if (!(await store.insert(user, [draft('user.created', user.createdAt, user.id, input.clientIp)]))) throw new AppError('EMAIL_ALREADY_USED');
      return {
        id: user.id,
        created_at: user.createdAt,
        email: user.email,
        email_verified: false,
        registered_totp: false,
        passkey_count: 0,
        disabled: false,
        disabled_until: null,
        recovery_code: recoveryCode.code,
      };
    },
  };
}
export type UsersService = ReturnType<typeof createUsersService>;
/** Looks a user up by id, for the path checks of every feature's routes. */
export type FindUser = UsersService['find'];
