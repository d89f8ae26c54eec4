import { AppError } from '../errors';
import { draft } from '../events/model';
import type { EventStore } from '../events/store';
import { rejectBreached, type BreachChecker } from '../breach-check/checker';
import { addressKey } from '../limits/address-key';
import { AWAITING_MIGRATION, isAwaitingMigration } from '../password-migration/model';
import type { PasswordMigration } from '../password-migration/service';
import { nowSeconds, type Clock } from '../security/clock';
import { normalizeEmail } from '../security/email-address';
import { isCurrentArgon2id } from '../hashing/formats';
import { dummyPasswordHash, type PasswordHasher } from '../hashing/password-hash';
import type { RateLimits } from '../limits/rate-limit';
import { isDisabled, rejectDisabled, type UserView } from '../users/model';
import type { UserRecord, UserStore } from '../users/store';
import type { PasswordStore } from './store';

export interface PasswordsDeps {
  store: PasswordStore;
  users: UserStore;
  hasher: PasswordHasher;
  breach: BreachChecker;
  limits: RateLimits;
  events: EventStore;
  clock: Clock;
  /** API.md §19: how the password of a user imported without a hash is taken over. */
  migration: PasswordMigration;
}

/**
 * The address bucket and the login block, then `check`. Checks from one address run one at a time:
 * the slow judgement sits between reading the block and counting a failure, and parallel guesses
 * must not all pass the block before the first failure is counted. Passkey logins share it.
 */
export function guardLogin<T>(limits: RateLimits, clientIp: string | null, check: () => Promise<T>): Promise<T> {
  if (clientIp === null) return check();
  const key = addressKey(clientIp);
  return limits.serial.run(`login:${key}`, async () => {
    const spent = await limits.address.consume(key);
    const block = await limits.loginBlock.check(key);
    // Out of tokens and blocked: the longer wait is when the same request could pass (API.md §2).
    const waits = [spent, block].flatMap((result) => (result.ok ? [] : [result.retryAfterSeconds]));
    if (waits.length > 0) throw new AppError('TOO_MANY_REQUESTS', Math.max(...waits));
    return check();
  });
}

/**
 * Only failed logins count toward the block, and a success does not clear it (API.md §9). True when
 * this failure started the block.
 */
export async function countFailedLogin(limits: RateLimits, clientIp: string | null): Promise<boolean> {
  return clientIp !== null && (await limits.loginBlock.recordFailure(addressKey(clientIp))).locked;
}

/** The one home of password checking: the address's limits, the login block, the hash comparison. */
export function createPasswordsService({ store, users, hasher, breach, limits, events, clock, migration }: PasswordsDeps) {
  const guarded = <T>(clientIp: string | null, check: () => Promise<T>): Promise<T> => guardLogin(limits, clientIp, check);

  /** `userId` is null for an unknown email: the attempt is still an event, with no user. */
  const countIncorrect = async (userId: string | null, clientIp: string | null) => {
    const blocked = await countFailedLogin(limits, clientIp);
    const time = nowSeconds(clock);
    const incorrect = draft('password.incorrect', time, userId, clientIp);
    await events.append(blocked ? [incorrect, draft('address.blocked', time, userId, clientIp)] : [incorrect]);
  };

  /**
   * Rehash on use (API.md §11): a correct password checked against anything but Gatehouse's current
   * argon2id (an imported format, older parameters) replaces it, only if the stored hash is still
   * the one that was checked, so parallel correct logins store exactly one new hash. A full hashing
   * queue skips it: the login has succeeded, and the next one tries again.
   */
  const rehashIfOutdated = async (user: UserRecord, password: string) => {
    if (isCurrentArgon2id(user.passwordHash)) return;
    let fresh: string;
    try {
      fresh = await hasher.hash(password);
    } catch (error) {
      if (error instanceof AppError && error.errorCode === 'SERVER_BUSY') return;
      throw error;
    }
    // Its event is written only by the request whose statement applied.
    await store.replaceHash(user.id, user.passwordHash, fresh, [draft('password.rehashed', nowSeconds(clock), user.id)]);
  };

  /**
   * API.md §19: the old system judges the password of a user awaiting migration, after the limits
   * were spent. Its match is hashed first, then stored by one statement that applies only while the
   * user still awaits, so of parallel correct sign-ins one stores its hash and writes the event, and
   * all succeed. A hook without a usable answer refuses with nothing counted.
   */
  const takeOver = async (user: UserRecord, password: string, clientIp: string | null) => {
    const verdict = await migration.check({ id: user.id, email: user.email }, password);
    if (verdict === 'unavailable') throw new AppError('UNAVAILABLE');
    if (verdict !== 'match') {
      await countIncorrect(user.id, clientIp);
      throw new AppError('INCORRECT_PASSWORD');
    }
    const fresh = await hasher.hash(password);
    await store.replaceHash(user.id, AWAITING_MIGRATION, fresh, [draft('password.migrated', nowSeconds(clock), user.id, clientIp)]);
    const current = await users.find(user.id);
    if (current === undefined) throw new AppError('NOT_FOUND');
    rejectDisabled(current, nowSeconds(clock));
  };

  /** Every endpoint that checks a password comes through here, so each one rehashes a correct one. */
  const checkPassword = async (user: UserRecord, password: string, clientIp: string | null) => {
    if (isAwaitingMigration(user.passwordHash)) return takeOver(user, password, clientIp);
    if (await hasher.verify(password, user.passwordHash)) {
      // Only a correct password learns of USER_DISABLED (API.md §14), read fresh after the slow verify,
      // so a disable answered meanwhile is seen; nothing is rehashed for a disabled user.
      const current = await users.find(user.id);
      if (current === undefined) throw new AppError('NOT_FOUND');
      rejectDisabled(current, nowSeconds(clock));
      return rehashIfOutdated(user, password);
    }
    await countIncorrect(user.id, clientIp);
    throw new AppError('INCORRECT_PASSWORD');
  };

  return {
    authenticate: (input: { email: string; password: string; clientIp: string | null }): Promise<UserView> =>
      guarded(input.clientIp, async () => {
        const user = await users.findByEmail(normalizeEmail(input.email));
        if (user === undefined) {
          // The same work as a wrong password, so timing does not reveal which emails exist.
          await hasher.verify(input.password, await dummyPasswordHash());
          await countIncorrect(null, input.clientIp);
          throw new AppError('NOT_FOUND');
        }
        await checkPassword(user, input.password, input.clientIp);
        // Again as the last step: a disable answered during a rehash is seen too.
        const view = await users.findView(user.id, nowSeconds(clock));
        if (view === undefined) throw new AppError('NOT_FOUND');
        if (view.disabled) throw new AppError('USER_DISABLED');
        return view;
      }),

    verify: (user: UserRecord, input: { password: string; clientIp: string | null }): Promise<void> =>
      guarded(input.clientIp, () => checkPassword(user, input.password, input.clientIp)),

    /** The new password's strength is checked before the current one (API.md §1, order of checks). */
    update: (user: UserRecord, input: { password: string; newPassword: string; clientIp: string | null }): Promise<void> => {
      // Changing a credential, not only checking one: refused before any work, like the other changes (API.md §14).
      rejectDisabled(user, nowSeconds(clock));
      return guarded(input.clientIp, async () => {
        await rejectBreached(breach, input.newPassword);
        await checkPassword(user, input.password, input.clientIp);
        const passwordHash = await hasher.hash(input.newPassword);
        const updated = [draft('password.updated', nowSeconds(clock), user.id, input.clientIp)];
        // Checked again where the password is written: a disable answered during the hash wins (API.md §14).
        const outcome = await store.setHash(user.id, passwordHash, updated, (state) => isDisabled(state, nowSeconds(clock)));
        if (outcome === 'gone') throw new AppError('NOT_FOUND');
        if (outcome === 'refused') throw new AppError('USER_DISABLED');
      });
    },
  };
}
export type PasswordsService = ReturnType<typeof createPasswordsService>;
