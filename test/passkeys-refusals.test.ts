import { describe, expect, test } from 'bun:test';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { isSupportedPublicKey } from '../src/passkeys/webauthn/fields';
import { createRateLimits } from '../src/limits/rate-limit';
import { seedPasskeys } from './fuzz/passkeys-seed';
import type { CeremonyKnobs } from './support/soft-authenticator';
import { expectError, type Harness } from './support/harness';
import { rowsOf } from './support/rows';
import {
  authenticationOptions,
  challengeExists,
  login,
  passkeyHarness,
  registered,
  registrationOptions,
  softAuthenticator,
  tables,
} from './support/passkeys';

/**
 * Every refusal of API.md §13 answers its documented error and changes nothing, except that a
 * verification that ran used its challenge up. State is compared table by table.
 */
const h = passkeyHarness();

/**
 * Sends the call; asserts the error, that every table but challenges and events is unchanged, that
 * the challenge is gone afterwards (`consumed`) or as it was, and that the only event written is the
 * failed verification that used a challenge up (API.md §13).
 */
async function refused(
  call: () => Promise<{ status: number; json: any }>,
  error: string,
  challenge: { id: string; consumed: boolean },
  on: Harness = h,
) {
  const before = await tables(on, ['challenges', 'events']);
  const challengesBefore = (await tables(on)).challenges!.length;
  const eventsBefore = (await tables(on)).events!.length;
  const existed = await challengeExists(on, challenge.id);
  expectError(await call(), 400, error);
  expect(await tables(on, ['challenges', 'events'])).toEqual(before);
  expect(await challengeExists(on, challenge.id)).toBe(existed && !challenge.consumed);
  // No other challenge went with it.
  const usedUp = existed && challenge.consumed;
  expect((await tables(on)).challenges!.length).toBe(challengesBefore - (usedUp ? 1 : 0));
  const written = ((await tables(on)).events as { type: string }[]).slice(eventsBefore).map((event) => event.type);
  expect(written).toEqual(usedUp && error === 'PASSKEY_VERIFICATION_FAILED' ? ['passkey.failed'] : []);
}

const postPasskey = (userId: string, body: unknown) => () => h.call('POST', `/users/${userId}/passkeys`, { body });
const postLogin = (body: unknown) => () => h.call('POST', '/authenticate/passkey', { body });

describe('registration refused by verification (challenge used up)', () => {
  const cases: [string, CeremonyKnobs, 'required' | 'preferred'][] = [
    ['wrong origin', { origin: 'https://evil.example' }, 'preferred'],
    ['an origin on the RP id that is not configured', { origin: 'https://other.example.com' }, 'preferred'],
    ['wrong RP id', { rpId: 'evil.example' }, 'preferred'],
    ['user not present', { userPresent: false }, 'preferred'],
    ['user not verified when required', { userVerified: false }, 'required'],
    ['clientData of the other ceremony', { type: 'webauthn.get' }, 'preferred'],
    ['another challenge', { challenge: isoBase64URL.fromBuffer(new Uint8Array(32)) }, 'preferred'],
    ['backed up without being backup eligible', { backedUp: true, backupEligible: false }, 'preferred'],
    // Import refuses such a key, so the user could be exported and never imported again.
    ['a public key of 2,049 bytes', { publicKeyBytes: 2049 }, 'preferred'],
    ['a public key of 20,000 bytes', { publicKeyBytes: 20_000 }, 'preferred'],
  ];
  for (const [name, knobs, userVerification] of cases) {
    test(name, async () => {
      const user = await h.createUser();
      const { challenge_id, options } = await registrationOptions(h, user.id, { user_verification: userVerification });
      const response = await softAuthenticator().register(options, knobs);
      await refused(postPasskey(user.id, { challenge_id, response }), 'PASSKEY_VERIFICATION_FAILED', { id: challenge_id, consumed: true });
      expect(h.logs.at(-2)).toMatchObject({ message: 'passkey verification failed' });
      // Used up: the same answer, now well-formed or not, finds no challenge.
      await refused(postPasskey(user.id, { challenge_id, response }), 'INVALID_REQUEST', { id: challenge_id, consumed: true });
    });
  }

  test('controls: an unverified user with "preferred", and the second configured origin, register', async () => {
    const user = await h.createUser();
    await registered(h, user.id, softAuthenticator({ userVerified: false }));
    await registered(h, user.id, softAuthenticator({ origin: 'https://login.example.com' }));
  });

  test('control: a public key of exactly 2,048 bytes registers, signs in, and is one import accepts', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator, { knobs: { publicKeyBytes: 2048 } });
    expect((await login(h, authenticator)).status).toBe(200);
    const [stored] = (await rowsOf(h, 'passkeys')).filter((row) => row.userId === user.id);
    expect(Buffer.from(stored!.publicKey, 'base64url')).toHaveLength(2048);
    expect(isSupportedPublicKey(stored!.publicKey)).toBe(true);
  });

  test('hostile response objects are PASSKEY_VERIFICATION_FAILED or INVALID_DATA, never a 500 or the library\'s message', async () => {
    const user = await h.createUser();
    const nested = `${'['.repeat(20)}${']'.repeat(20)}`;
    const responses = [
      { id: 'a', rawId: 'b', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA' } },
      { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: '!!!', attestationObject: 'oA' } },
      { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: isoBase64URL.fromUTF8String('{"type":'), attestationObject: 'oA' } },
      { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'A'.repeat(40_000) } },
      { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: isoBase64URL.fromUTF8String(nested) } },
    ];
    for (const response of responses) {
      const { challenge_id } = await registrationOptions(h, user.id);
      const res = await h.call('POST', `/users/${user.id}/passkeys`, { body: { challenge_id, response } });
      expect(res.json).toEqual({ error: 'PASSKEY_VERIFICATION_FAILED' });
    }
  });
});

describe('registration refused by its challenge (nothing used up)', () => {
  test('unknown, another user\'s, the other ceremony\'s, expired', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    const authenticator = softAuthenticator();
    const mine = await registrationOptions(h, user.id);
    const response = await authenticator.register(mine.options);
    await refused(postPasskey(user.id, { challenge_id: 'nosuchchallenge', response }), 'INVALID_REQUEST', { id: 'nosuchchallenge', consumed: true });
    await refused(postPasskey(other.id, { challenge_id: mine.challenge_id, response }), 'INVALID_REQUEST', { id: mine.challenge_id, consumed: false });
    const loginChallenge = await authenticationOptions(h);
    await refused(postPasskey(user.id, { challenge_id: loginChallenge.challenge_id, response }), 'INVALID_REQUEST', { id: loginChallenge.challenge_id, consumed: false });
    h.advance(300_000);
    await refused(postPasskey(user.id, { challenge_id: mine.challenge_id, response }), 'INVALID_REQUEST', { id: mine.challenge_id, consumed: false });
  });

  test('a challenge works until its 5 minutes are up', async () => {
    const user = await h.createUser();
    const { challenge_id, options } = await registrationOptions(h, user.id);
    h.advance(299_000);
    const response = await softAuthenticator().register(options);
    expect((await h.call('POST', `/users/${user.id}/passkeys`, { body: { challenge_id, response } })).status).toBe(200);
    await refused(postPasskey(user.id, { challenge_id, response }), 'INVALID_REQUEST', { id: challenge_id, consumed: true });
  });
});

describe('duplicates and the limit of ten', () => {
  test('a credential registered twice, for the same user or another: PASSKEY_ALREADY_REGISTERED', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const credentialId = authenticator.credentials[0]!.id;
    for (const target of [user.id, other.id]) {
      const { challenge_id, options } = await registrationOptions(h, target);
      const response = await authenticator.register(options, { credentialId });
      await refused(postPasskey(target, { challenge_id, response }), 'PASSKEY_ALREADY_REGISTERED', { id: challenge_id, consumed: true });
    }
  });

  test('the eleventh passkey is NOT_ALLOWED at the options, and at the verify when options were fetched earlier', async () => {
    const user = await h.createUser();
    for (let i = 0; i < 9; i++) await registered(h, user.id, softAuthenticator());
    const early = await registrationOptions(h, user.id);
    await registered(h, user.id, softAuthenticator());
    const before = await tables(h);
    expectError(await h.call('POST', `/users/${user.id}/passkey-registration-options`), 400, 'NOT_ALLOWED');
    expect(await tables(h)).toEqual(before);
    const response = await softAuthenticator().register(early.options);
    await refused(postPasskey(user.id, { challenge_id: early.challenge_id, response }), 'NOT_ALLOWED', { id: early.challenge_id, consumed: true });
    expect((await h.call('GET', `/users/${user.id}`)).json.passkey_count).toBe(10);
  });
});

describe('login refused by verification (challenge used up)', () => {
  const cases: [string, CeremonyKnobs][] = [
    ['wrong origin', { origin: 'https://evil.example' }],
    ['wrong RP id', { rpId: 'evil.example' }],
    ['user not present', { userPresent: false }],
    ['user not verified (a login requires it)', { userVerified: false }],
    ['tampered signature', { tamperSignature: true }],
    ['clientData of the other ceremony', { type: 'webauthn.create' }],
    ['stale counter: equal to the stored one', { signCount: 1 }],
    ['stale counter: 0 after a non-zero one', { signCount: 0 }],
    ['stale counter with a tampered signature', { signCount: 1, tamperSignature: true }],
  ];
  for (const [name, knobs] of cases) {
    test(name, async () => {
      const user = await h.createUser();
      const authenticator = softAuthenticator();
      await registered(h, user.id, authenticator);
      expect((await login(h, authenticator)).status).toBe(200); // stored counter 1
      const { challenge_id, options } = await authenticationOptions(h);
      const response = await authenticator.authenticate(options, knobs);
      await refused(postLogin({ challenge_id, response }), 'PASSKEY_VERIFICATION_FAILED', { id: challenge_id, consumed: true });
      await refused(postLogin({ challenge_id, response }), 'INVALID_REQUEST', { id: challenge_id, consumed: true });
    });
  }

  test('a deleted passkey, an unknown credential, another user\'s passkey, another user\'s userHandle', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    const authenticator = softAuthenticator();
    const passkey = await registered(h, user.id, authenticator);
    const othersAuthenticator = softAuthenticator();
    await registered(h, other.id, othersAuthenticator);
    const attempt = async (optionsBody: Record<string, unknown>, answer: (options: any) => Promise<unknown>) => {
      const { challenge_id, options } = await authenticationOptions(h, optionsBody);
      const response = await answer(options);
      await refused(postLogin({ challenge_id, response }), 'PASSKEY_VERIFICATION_FAILED', { id: challenge_id, consumed: true });
    };
    // Options for `user`, answered by the other user's passkey: the library alone would accept it.
    await attempt({ user_id: user.id }, (options) => othersAuthenticator.authenticate({ ...options, allowCredentials: [] }));
    await attempt({}, (options) => authenticator.authenticate(options, { userHandle: isoBase64URL.fromUTF8String(other.id) }));
    await attempt({}, (options) => authenticator.authenticate(options, { userHandle: 'not base64url!' }));
    await attempt({}, async (options) => ({ ...(await authenticator.authenticate(options)), id: 'AAAA', rawId: 'AAAA' }));
    expect((await h.call('DELETE', `/users/${user.id}/passkeys/${passkey.id}`)).status).toBe(204);
    await attempt({}, (options) => authenticator.authenticate(options));
    // Without a userHandle the owner is still checked by the credential.
    expect((await login(h, othersAuthenticator, { knobs: { userHandle: null } })).json.id).toBe(other.id);
  });
});

describe('login and second factor refused by their challenge (nothing used up)', () => {
  test('registration challenge, second-factor challenge, login challenge at verify-2fa, another user\'s, expired', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    await registered(h, other.id, softAuthenticator());
    const registration = await registrationOptions(h, user.id);
    const loginChallenge = await authenticationOptions(h);
    const secondFactor = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
    const response = await authenticator.authenticate(loginChallenge.options);
    const verify2fa = (userId: string, challengeId: string) => () =>
      h.call('POST', `/users/${userId}/verify-2fa/passkey`, { body: { challenge_id: challengeId, response } });
    await refused(postLogin({ challenge_id: registration.challenge_id, response }), 'INVALID_REQUEST', { id: registration.challenge_id, consumed: false });
    await refused(postLogin({ challenge_id: secondFactor.challenge_id, response }), 'INVALID_REQUEST', { id: secondFactor.challenge_id, consumed: false });
    await refused(verify2fa(user.id, loginChallenge.challenge_id), 'INVALID_REQUEST', { id: loginChallenge.challenge_id, consumed: false });
    await refused(verify2fa(other.id, secondFactor.challenge_id), 'INVALID_REQUEST', { id: secondFactor.challenge_id, consumed: false });
    h.advance(300_000);
    await refused(postLogin({ challenge_id: loginChallenge.challenge_id, response }), 'INVALID_REQUEST', { id: loginChallenge.challenge_id, consumed: false });
    await refused(verify2fa(user.id, secondFactor.challenge_id), 'INVALID_REQUEST', { id: secondFactor.challenge_id, consumed: false });
  });

  test('a second factor with another user\'s passkey is PASSKEY_VERIFICATION_FAILED', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    await registered(h, user.id, softAuthenticator());
    const othersAuthenticator = softAuthenticator();
    await registered(h, other.id, othersAuthenticator);
    const { challenge_id, options } = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
    const response = await othersAuthenticator.authenticate({ ...options, allowCredentials: [] });
    const call = () => h.call('POST', `/users/${user.id}/verify-2fa/passkey`, { body: { challenge_id, response } });
    await refused(call, 'PASSKEY_VERIFICATION_FAILED', { id: challenge_id, consumed: true });
  });
});

describe('hostile credential objects on every verify route (the fuzz seed\'s list)', () => {
  test('each is INVALID_DATA, PASSKEY_VERIFICATION_FAILED or PAYLOAD_TOO_LARGE, never a 5xx; most reach the library', async () => {
    const { hostile } = await seedPasskeys({ owner: 'o', newcomer: 'n' }, 0);
    const user = await h.createUser();
    await registered(h, user.id, softAuthenticator());
    const seen: Record<string, number> = {};
    let reachedVerification = 0;
    for (const response of hostile) {
      const routes: [string, () => Promise<{ challenge_id: string }>][] = [
        [`/users/${user.id}/passkeys`, () => registrationOptions(h, user.id)],
        ['/authenticate/passkey', () => authenticationOptions(h)],
        [`/users/${user.id}/verify-2fa/passkey`, () => authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' })],
      ];
      let verified = false;
      for (const [path, options] of routes) {
        h.deps.limits = createRateLimits(h.deps.clock); // no lockout in the way
        const { challenge_id } = await options();
        const res = await h.call('POST', path, { body: { challenge_id, response } });
        expect({ path, status: res.status }).toEqual({ path, status: res.status < 500 ? res.status : -1 });
        expect(Object.keys(res.json)).toEqual(['error']);
        seen[res.json.error] = (seen[res.json.error] ?? 0) + 1;
        verified ||= res.json.error === 'PASSKEY_VERIFICATION_FAILED';
      }
      if (verified) reachedVerification++;
    }
    // A few near 60,000-character fields push the whole body over 64 KiB.
    expect(Object.keys(seen).sort()).toEqual(['INVALID_DATA', 'PASSKEY_VERIFICATION_FAILED', 'PAYLOAD_TOO_LARGE']);
    // Only the objects with a wrongly typed field stop at the schema; the rest reach the library on some route.
    expect(reachedVerification).toBeGreaterThanOrEqual(hostile.length - 10);
  });
});
