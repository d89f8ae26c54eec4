import { describe, expect, test } from 'bun:test';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { createHarness, expectError } from './support/harness';
import { insertRows, rowOf, rowsOf } from './support/rows';
import {
  authenticationOptions,
  login,
  passkeyHarness,
  register,
  registered,
  registrationOptions,
  secondFactor,
  softAuthenticator,
} from './support/passkeys';

/** API.md §13 through HTTP with the software authenticator: ceremonies, answers and management. */
const h = passkeyHarness();
const row = async (id: string) => (await rowOf(h, 'passkeys', { id }))!;
const PASSKEY_FIELDS = ['backed_up', 'created_at', 'id', 'last_used_at', 'name', 'transports', 'user_id'];

describe('registration', () => {
  test('options are standard creation options for this RP and user, with a challenge id', async () => {
    const user = await h.createUser({ email: 'reg@example.com' });
    const { challenge_id, options } = await registrationOptions(h, user.id);
    expect(challenge_id).toMatch(/^[a-z2-9]{24}$/);
    expect(options).toMatchObject({
      rp: { id: 'example.com', name: 'Example' },
      user: { id: isoBase64URL.fromUTF8String(user.id), name: 'reg@example.com' },
      timeout: 300_000,
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-8, -7, -257]);
    expect(isoBase64URL.toBuffer(options.challenge).length).toBe(32);
    const required = await registrationOptions(h, user.id, { user_verification: 'required' });
    expect(required.options.authenticatorSelection.userVerification).toBe('required');
    expect(required.challenge_id).not.toBe(challenge_id);
  });

  test('a user without email is named by its id', async () => {
    const user = await h.createUser();
    expect((await registrationOptions(h, user.id)).options.user.name).toBe(user.id);
  });

  test('registers a passkey: the answer never holds the credential id, public key or counter', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    const res = await register(h, user.id, authenticator);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(PASSKEY_FIELDS);
    expect(res.json).toMatchObject({ user_id: user.id, name: 'Passkey', last_used_at: null, backed_up: false, transports: ['internal'] });
    expect(res.json.created_at).toBe(Math.floor(h.now() / 1000));
    const stored = (await row(res.json.id));
    expect(stored.credentialId).toBe(authenticator.credentials[0]!.id);
    expect(stored.counter).toBe(0);
    for (const secret of [stored.credentialId, stored.publicKey]) expect(res.text).not.toContain(secret);
    const listed = await h.call('GET', `/users/${user.id}/passkeys`);
    expect(listed.json).toEqual([res.json]);
    expect(listed.text).not.toContain(stored.credentialId);
    expect((await h.call('GET', `/users/${user.id}`)).json.passkey_count).toBe(1);
  });

  test('names: the caller\'s, else the provider\'s from the AAGUID, else "Passkey" (unknown or all-zero)', async () => {
    const user = await h.createUser();
    expect((await registered(h, user.id, softAuthenticator(), { name: 'Work laptop 💻' })).name).toBe('Work laptop 💻');
    expect((await registered(h, user.id, softAuthenticator({ aaguid: 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4' }))).name).toBe('Google Password Manager');
    expect((await registered(h, user.id, softAuthenticator({ aaguid: 'FBFC3007-154E-4ECC-8C0B-6E020557D7BD' }))).name).toBe('iCloud Keychain');
    expect((await registered(h, user.id, softAuthenticator({ aaguid: '00000000-0000-0000-0000-000000000000' }))).name).toBe('Passkey');
  });

  test('backed_up follows the authenticator\'s flag; unknown transport values are dropped', async () => {
    const user = await h.createUser();
    const synced = await registered(h, user.id, softAuthenticator({ backupEligible: true, backedUp: true }));
    expect(synced).toMatchObject({ backed_up: true });
    const { challenge_id, options } = await registrationOptions(h, user.id);
    const response = await softAuthenticator().register(options);
    response.response.transports = ['usb', 'x'.repeat(1000), 'hybrid', 'usb', 'smart-card'] as never;
    const res = await h.call('POST', `/users/${user.id}/passkeys`, { body: { challenge_id, response } });
    expect(res.json.transports).toEqual(['usb', 'hybrid', 'smart-card']);
    expect((await row(res.json.id)).transports).toBe('usb,hybrid,smart-card');
  });

  test('options exclude the user\'s passkeys, and the authenticator then refuses to register again', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const { options } = await registrationOptions(h, user.id);
    expect(options.excludeCredentials).toEqual([{ id: authenticator.credentials[0]!.id, type: 'public-key', transports: ['internal'] }]);
    await expect(authenticator.register(options)).rejects.toThrow('InvalidStateError');
  });

  test('names: 64 characters at most, no control characters, not empty', async () => {
    const user = await h.createUser();
    expect((await registered(h, user.id, softAuthenticator(), { name: '🔑'.repeat(64) })).name).toBe('🔑'.repeat(64));
    for (const name of ['🔑'.repeat(65), '', 'a\u0000b', 'tab\there', 'bad\uD800', 7]) {
      const { challenge_id, options } = await registrationOptions(h, user.id);
      const response = await softAuthenticator().register(options);
      expectError(await h.call('POST', `/users/${user.id}/passkeys`, { body: { challenge_id, response, name } }), 400, 'INVALID_DATA');
    }
  });
});

describe('management', () => {
  test('lists oldest first, renames, deletes; 404 for another user\'s or a missing passkey', async () => {
    const user = await h.createUser();
    const other = await h.createUser();
    const first = await registered(h, user.id, softAuthenticator(), { name: 'first' });
    h.advance(1000);
    const second = await registered(h, user.id, softAuthenticator(), { name: 'second' });
    expect((await h.call('GET', `/users/${user.id}/passkeys`)).json.map((p: { name: string }) => p.name)).toEqual(['first', 'second']);

    const renamed = await h.call('PATCH', `/users/${user.id}/passkeys/${first.id}`, { body: { name: 'renamed' } });
    expect(renamed.json).toMatchObject({ id: first.id, name: 'renamed' });
    expectError(await h.call('PATCH', `/users/${user.id}/passkeys/${first.id}`, { body: { name: '' } }), 400, 'INVALID_DATA');
    // The missing passkey is told before the bad body (API.md §1).
    expectError(await h.call('PATCH', `/users/${other.id}/passkeys/${first.id}`, { body: { name: 7 } }), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/users/${other.id}/passkeys/${first.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/users/nosuchuser/passkeys/${first.id}`), 404, 'NOT_FOUND');

    expect((await h.call('DELETE', `/users/${user.id}/passkeys/${second.id}`)).status).toBe(204);
    expectError(await h.call('DELETE', `/users/${user.id}/passkeys/${second.id}`), 404, 'NOT_FOUND');
    expect((await h.call('GET', `/users/${user.id}/passkeys`)).json.map((p: { name: string }) => p.name)).toEqual(['renamed']);
    expect((await h.call('GET', `/users/${user.id}`)).json.passkey_count).toBe(1);
    expectError(await h.call('GET', '/users/nosuchuser/passkeys'), 404, 'NOT_FOUND');
  });

  test('deleting the user deletes its passkeys and challenges', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    await registrationOptions(h, user.id);
    await authenticationOptions(h, { user_id: user.id });
    const counts = async () => [(await rowsOf(h, 'passkeys', { userId: user.id })).length, (await rowsOf(h, 'challenges', { userId: user.id })).length];
    expect(await counts()).toEqual([1, 2]);
    expect((await h.call('DELETE', `/users/${user.id}`)).status).toBe(204);
    expect(await counts()).toEqual([0, 0]);
    expectError(await login(h, authenticator), 400, 'PASSKEY_VERIFICATION_FAILED');
  });
});

describe('passwordless login', () => {
  test('without user_id: options allow any discoverable passkey and answer the owner', async () => {
    const user = await h.createUser({ email: 'login@example.com' });
    const authenticator = softAuthenticator();
    const passkey = await registered(h, user.id, authenticator);
    const { options } = await authenticationOptions(h);
    expect(options).toMatchObject({ rpId: 'example.com', userVerification: 'required', timeout: 300_000 });
    expect(options.allowCredentials).toBeUndefined();
    h.advance(5000);
    const res = await login(h, authenticator);
    expect(res.status).toBe(200);
    expect(res.json).toEqual((await h.call('GET', `/users/${user.id}`)).json);
    expect(res.json).toMatchObject({ id: user.id, email: 'login@example.com', passkey_count: 1 });
    expect((await row(passkey.id))).toMatchObject({ counter: 1, lastUsedAt: Math.floor(h.now() / 1000) });
    expect((await login(h, authenticator)).status).toBe(200);
    expect((await row(passkey.id)).counter).toBe(2);
  });

  test('with user_id: only that user\'s passkeys; none → NOT_ALLOWED; unknown user → NOT_FOUND', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator({ residentKeys: false });
    await registered(h, user.id, authenticator);
    const { options } = await authenticationOptions(h, { user_id: user.id });
    expect(options.allowCredentials).toEqual([{ id: authenticator.credentials[0]!.id, type: 'public-key', transports: ['internal'] }]);
    expect((await login(h, authenticator, { userId: user.id })).json.id).toBe(user.id);
    const bare = await h.createUser();
    expectError(await h.call('POST', '/passkey-authentication-options', { body: { user_id: bare.id } }), 400, 'NOT_ALLOWED');
    expectError(await h.call('POST', '/passkey-authentication-options', { body: { user_id: 'x'.repeat(24) } }), 404, 'NOT_FOUND');
  });

  test('a synced passkey whose counter is always 0 keeps working; backed_up follows the latest assertion', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator({ counter: 'zero', backupEligible: true, backedUp: false });
    const passkey = await registered(h, user.id, authenticator);
    for (let i = 0; i < 3; i++) expect((await login(h, authenticator)).status).toBe(200);
    expect((await row(passkey.id))).toMatchObject({ counter: 0, backedUp: false });
    expect((await login(h, authenticator, { knobs: { backedUp: true } })).status).toBe(200);
    expect((await row(passkey.id)).backedUp).toBe(true);
  });

  test('bodies: the response must be a credential object; purpose second_factor needs user_id', async () => {
    for (const response of [undefined, null, 'text', [], { id: 7 }, { id: 'a', rawId: 'a', type: 'public-key' }]) {
      expectError(await h.call('POST', '/authenticate/passkey', { body: { challenge_id: 'x', response } }), 400, 'INVALID_DATA');
    }
    expectError(await h.call('POST', '/passkey-authentication-options', { body: { purpose: 'second_factor' } }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/passkey-authentication-options', { body: { purpose: 'admin' } }), 400, 'INVALID_DATA');
    const user = await h.createUser();
    expectError(await h.call('POST', `/users/${user.id}/passkey-registration-options`, { body: { user_verification: 'discouraged' } }), 400, 'INVALID_DATA');
    // Every field of the two options bodies is optional, and still the body must be an object (found by the fuzzer).
    for (const rawBody of ['"x"', '5', '[]', '<xml/>', 'null']) {
      expectError(await h.call('POST', `/users/${user.id}/passkey-registration-options`, { rawBody }), 400, 'INVALID_DATA');
      expectError(await h.call('POST', '/passkey-authentication-options', { rawBody }), 400, 'INVALID_DATA');
    }
    expect((await h.call('POST', '/passkey-authentication-options', { rawBody: '' })).status).toBe(200);
  });
});

describe('second factor', () => {
  test('options ask only for presence; a passkey without user verification passes; 204', async () => {
    const user = await h.createUser();
    const authenticator = softAuthenticator({ userVerified: false });
    const passkey = await registered(h, user.id, authenticator);
    const { options } = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
    expect(options.userVerification).toBe('preferred');
    const res = await secondFactor(h, user.id, authenticator);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await row(passkey.id))).toMatchObject({ counter: 1, lastUsedAt: Math.floor(h.now() / 1000) });
    // The same passkey cannot log in without the user's verification.
    expectError(await login(h, authenticator), 400, 'PASSKEY_VERIFICATION_FAILED');
  });
});

describe('without an RP id', () => {
  test('every passkey endpoint answers NOT_ALLOWED (after the path and body checks)', async () => {
    const off = createHarness();
    const user = await off.createUser();
    const body = { challenge_id: 'k3mf8qz2hv9wne4rp6tjc7xa', response: { id: 'a', rawId: 'a', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: 'oA', authenticatorData: 'AA', signature: 'AA' } } };
    await insertRows(off, 'passkeys', [{ id: 'pk', userId: user.id, credentialId: 'c', publicKey: 'k', counter: 0, transports: '', backedUp: false, name: 'n', createdAt: 1 }]);
    const calls: [string, string, unknown?][] = [
      ['POST', `/users/${user.id}/passkey-registration-options`, {}],
      ['POST', `/users/${user.id}/passkeys`, body],
      ['GET', `/users/${user.id}/passkeys`],
      ['PATCH', `/users/${user.id}/passkeys/pk`, { name: 'x' }],
      ['DELETE', `/users/${user.id}/passkeys/pk`],
      ['POST', '/passkey-authentication-options', {}],
      ['POST', '/authenticate/passkey', body],
      ['POST', `/users/${user.id}/verify-2fa/passkey`, body],
    ];
    for (const [method, path, sent] of calls) expectError(await off.call(method, path, { body: sent }), 400, 'NOT_ALLOWED');
    expectError(await off.call('GET', '/users/nosuchuser/passkeys'), 404, 'NOT_FOUND');
    expectError(await off.call('POST', '/authenticate/passkey', { body: {} }), 400, 'INVALID_DATA');
    // The user still shows the passkey it holds.
    expect((await off.call('GET', `/users/${user.id}`)).json.passkey_count).toBe(1);
  });
});
