import { AppError } from '../errors';
import { draft, type EventDraft } from '../events/model';
import type { EventStore } from '../events/store';
import type { Logger } from '../http/log';
import { countFailedLogin, guardLogin } from '../passwords/service';
import { nowSeconds, type Clock } from '../security/clock';
import { MAX_PASSKEYS_PER_USER } from './webauthn/fields';
import { passkeyNameFor } from './webauthn/names';
import { generateId } from '../security/random';
import { enforce, spendAddressToken, type RateLimits } from '../limits/rate-limit';
import { isDisabled, rejectDisabled, type UserView } from '../users/model';
import { creationOptions, requestOptions, userHandleMatches, verifyAssertion, verifyRegistration, type RelyingParty, type UserVerification } from './webauthn/ceremonies';
import type { UserRecord, UserStore } from '../users/store';
import { toPasskeyView, type AuthenticationOptionsView, type PasskeyView, type RegistrationOptionsView } from './model';
import type { ChallengeRecord, PasskeyRecord, PasskeyStore } from './store';

/** A challenge lives 5 minutes (API.md §13). */
const CHALLENGE_LIFETIME_SECONDS = 5 * 60;

export interface PasskeysDeps {
  store: PasskeyStore;
  users: UserStore;
  limits: RateLimits;
  clock: Clock;
  log: Logger;
  events: EventStore;
  /** Null when no RP id is configured: every passkey endpoint then answers NOT_ALLOWED. */
  relyingParty: RelyingParty | null;
}

type Purpose = 'login' | 'second_factor';
/** A relayed `navigator.credentials.get()` answer; its shape beyond `id` is the library's to judge. */
type Assertion = { id: string; response: { userHandle?: string | null } };
type CheckedAssertion = { passkey: PasskeyRecord; counter: number; backedUp: boolean };

const refs = (list: PasskeyRecord[]) => list.map((passkey) => ({ id: passkey.credentialId, transports: passkey.transports }));

export function createPasskeysService({ store, users, limits, clock, log, events, relyingParty }: PasskeysDeps) {
  const rp = (): RelyingParty => {
    if (relyingParty === null) throw new AppError('NOT_ALLOWED');
    return relyingParty;
  };

  /** A live challenge of this ceremony and purpose, and of `userId` when given; any other is unknown here. */
  async function boundChallenge(id: string, ceremony: ChallengeRecord['ceremony'], purpose: Purpose | null, userId?: string) {
    const challenge = await store.findLiveChallenge(id, nowSeconds(clock));
    if (challenge === undefined || challenge.ceremony !== ceremony || challenge.purpose !== purpose) throw new AppError('INVALID_REQUEST');
    if (userId !== undefined && challenge.userId !== userId) throw new AppError('INVALID_REQUEST');
    return challenge;
  }

  async function newChallenge(fields: Omit<ChallengeRecord, 'id' | 'expiresAt'>): Promise<string> {
    const id = generateId();
    const stored = await store.insertChallenge({ ...fields, id, expiresAt: nowSeconds(clock) + CHALLENGE_LIFETIME_SECONDS });
    if (!stored) throw new AppError('NOT_FOUND');
    return id;
  }

  /** Counts a failure toward its limit; answers the events of a lock it started. */
  type CountFailure = () => Promise<EventDraft[]>;
  const noLimit: CountFailure = async () => [];

  async function refuse(reason: string, count: CountFailure): Promise<never> {
    log({ level: 'info', message: 'passkey verification failed', reason });
    await events.append(await count());
    throw new AppError('PASSKEY_VERIFICATION_FAILED');
  }

  /** A failed verification still uses the challenge up; a parallel twin that took it first decides. */
  async function failed(challenge: ChallengeRecord, reason: string, count: CountFailure, clientIp: string | null = null): Promise<never> {
    const failure = [draft('passkey.failed', nowSeconds(clock), challenge.userId, clientIp)];
    if (!(await store.consumeChallenge(challenge.id, nowSeconds(clock), failure))) throw new AppError('INVALID_REQUEST');
    return refuse(reason, count);
  }

  /** The credential by id, its owner checked (the library checks neither), then the library's verification. */
  async function checkAssertion(challenge: ChallengeRecord, response: Assertion, owner: string | null) {
    const passkey = await store.findByCredentialId(response.id);
    if (passkey === undefined) return { ok: false as const, reason: 'unknown credential' };
    if ((owner !== null && passkey.userId !== owner) || !userHandleMatches(response, passkey.userId)) {
      return { ok: false as const, reason: 'credential of another user' };
    }
    const verdict = await verifyAssertion(rp(), challenge, response, passkey);
    return verdict.ok ? { ok: true as const, value: { passkey, ...verdict.value } } : verdict;
  }

  /** Consumes the challenge and records the use in one unit; counts the failure when the counter went stale meanwhile. */
  async function recordUse(challengeId: string, checked: CheckedAssertion, count: CountFailure, clientIp: string | null = null): Promise<void> {
    const now = nowSeconds(clock);
    const use = { passkeyId: checked.passkey.id, counter: checked.counter, backedUp: checked.backedUp, nowSeconds: now };
    const used = (result: 'used' | 'stale') => [draft(result === 'used' ? 'passkey.used' : 'passkey.failed', now, checked.passkey.userId, clientIp)];
    // The state is read again where the use is recorded: a disable answered meanwhile wins (API.md §14).
    const outcome = await store.use(challengeId, use, used, (owner) => isDisabled(owner, now));
    if (outcome === 'refused') throw new AppError('USER_DISABLED');
    if (outcome === 'gone') throw new AppError('INVALID_REQUEST');
    if (outcome === 'stale') await refuse('sign counter moved during the verification', count);
  }

  return {
    list: async (userId: string): Promise<PasskeyView[]> => {
      rp();
      return (await store.listOf(userId)).map(toPasskeyView);
    },
    /** For the path check of the routes on one passkey. */
    find: (userId: string, passkeyId: string) => store.find(userId, passkeyId),

    async rename(userId: string, passkeyId: string, name: string): Promise<PasskeyView> {
      rp();
      const renamed = await store.rename(userId, passkeyId, name);
      if (renamed === undefined) throw new AppError('NOT_FOUND');
      return toPasskeyView(renamed);
    },

    async delete(userId: string, passkeyId: string): Promise<void> {
      rp();
      if (!(await store.delete(userId, passkeyId, [draft('passkey.removed', nowSeconds(clock), userId)]))) throw new AppError('NOT_FOUND');
    },

    async registrationOptions(user: UserRecord, userVerification: UserVerification = 'preferred'): Promise<RegistrationOptionsView> {
      const party = rp();
      rejectDisabled(user, nowSeconds(clock));
      const held = await store.listOf(user.id);
      if (held.length >= MAX_PASSKEYS_PER_USER) throw new AppError('NOT_ALLOWED');
      const options = await creationOptions(party, { id: user.id, name: user.email ?? user.id }, refs(held), userVerification);
      const id = await newChallenge({ ceremony: 'registration', purpose: null, userId: user.id, challenge: options.challenge, userVerification });
      return { challenge_id: id, options };
    },

    async register(user: UserRecord, input: { challengeId: string; response: unknown; name: string | undefined }): Promise<PasskeyView> {
      const party = rp();
      rejectDisabled(user, nowSeconds(clock)); // before the challenge, which stays unused
      const challenge = await boundChallenge(input.challengeId, 'registration', null, user.id);
      const verdict = await verifyRegistration(party, challenge, input.response);
      if (!verdict.ok) return failed(challenge, verdict.reason, noLimit);
      const credential = verdict.value;
      const record: PasskeyRecord = {
        id: generateId(),
        userId: user.id,
        credentialId: credential.id,
        publicKey: credential.publicKey,
        counter: credential.counter,
        transports: credential.transports,
        backedUp: credential.backedUp,
        name: input.name ?? passkeyNameFor(credential.aaguid),
        createdAt: nowSeconds(clock),
        lastUsedAt: null,
      };
      const registered = [draft('passkey.registered', record.createdAt, user.id)];
      const outcome = await store.register(challenge.id, nowSeconds(clock), record, MAX_PASSKEYS_PER_USER, registered, (owner) => isDisabled(owner, nowSeconds(clock)));
      if (outcome === 'refused') throw new AppError('USER_DISABLED');
      if (outcome === 'gone') throw new AppError('INVALID_REQUEST');
      if (outcome === 'full') throw new AppError('NOT_ALLOWED');
      if (outcome === 'duplicate') throw new AppError('PASSKEY_ALREADY_REGISTERED');
      return toPasskeyView(record);
    },

    /**
     * A login requires user verification (the passkey stands for both factors); a second factor
     * only presence. The user's own checks come before the address token (API.md §9's order).
     */
    async authenticationOptions(input: { userId: string | null; purpose: Purpose; clientIp: string | null }): Promise<AuthenticationOptionsView> {
      const party = rp();
      if (input.purpose === 'second_factor' && input.userId === null) throw new AppError('INVALID_DATA');
      let allow: PasskeyRecord[] | undefined;
      if (input.userId !== null) {
        if ((await users.find(input.userId)) === undefined) throw new AppError('NOT_FOUND');
        allow = await store.listOf(input.userId);
        // An empty allow list would let any discoverable credential answer.
        if (allow.length === 0) throw new AppError('NOT_ALLOWED');
      }
      await spendAddressToken(limits, input.clientIp);
      const userVerification: UserVerification = input.purpose === 'login' ? 'required' : 'preferred';
      const options = await requestOptions(party, allow && refs(allow), userVerification);
      const id = await newChallenge({ ceremony: 'authentication', purpose: input.purpose, userId: input.userId, challenge: options.challenge, userVerification });
      return { challenge_id: id, options };
    },

    /** Passwordless login: failures count toward the address's login block like wrong passwords. */
    async authenticate(input: { challengeId: string; response: Assertion; clientIp: string | null }): Promise<UserView> {
      rp();
      const challenge = await boundChallenge(input.challengeId, 'authentication', 'login');
      const countFailure: CountFailure = async () =>
        (await countFailedLogin(limits, input.clientIp)) ? [draft('address.blocked', nowSeconds(clock), challenge.userId, input.clientIp)] : [];
      return guardLogin(limits, input.clientIp, async () => {
        const checked = await checkAssertion(challenge, input.response, challenge.userId);
        if (!checked.ok) return failed(challenge, checked.reason, countFailure, input.clientIp);
        // Only a correct passkey learns that its user is disabled; the challenge stays unused (API.md §14).
        const owner = await users.find(checked.value.passkey.userId);
        if (owner !== undefined) rejectDisabled(owner, nowSeconds(clock));
        await recordUse(challenge.id, checked.value, countFailure, input.clientIp);
        const view = await users.findView(checked.value.passkey.userId, nowSeconds(clock));
        if (view === undefined) throw new AppError('PASSKEY_VERIFICATION_FAILED');
        // Again as the last step, as the other logins do: a disable that committed after the use is seen.
        if (view.disabled) throw new AppError('USER_DISABLED');
        return view;
      });
    },

    /** The second factor after a password login: the user's own lockout, one check at a time. */
    async verifySecondFactor(user: UserRecord, input: { challengeId: string; response: Assertion }): Promise<void> {
      const userId = user.id;
      rp();
      rejectDisabled(user, nowSeconds(clock));
      const challenge = await boundChallenge(input.challengeId, 'authentication', 'second_factor', userId);
      const lockout = limits.passkeyVerify;
      const countFailure: CountFailure = async () =>
        (await lockout.recordFailure(userId)).locked ? [draft('second_factor.locked', nowSeconds(clock), userId)] : [];
      return limits.serial.run(`passkey:${userId}`, async () => {
        enforce(await lockout.check(userId));
        const checked = await checkAssertion(challenge, input.response, userId);
        if (!checked.ok) return failed(challenge, checked.reason, countFailure);
        await recordUse(challenge.id, checked.value, countFailure);
        await lockout.reset(userId);
      });
    },
  };
}
export type PasskeysService = ReturnType<typeof createPasskeysService>;
