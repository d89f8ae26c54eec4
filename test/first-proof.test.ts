import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { eventsDuring, summary } from './support/events';
import { expectError, STRONG_PASSWORD, type Harness } from './support/harness';
import { login, passkeyHarness, registered, softAuthenticator } from './support/passkeys';

/**
 * API.md §15, "the first proof of an address revokes what nobody proved", played as the attacker of
 * account pre-hijacking: they create a user with the victim's address and give it a password, a TOTP
 * key, a passkey, a recovery code they know and a pending email change to their own address; then the
 * victim proves the mailbox. On every set-up (SQLite, PostgreSQL + Redis with one and two instances).
 */
const VICTIM = 'victim@example.com';
const ATTACKER_PASSWORD = 'attacker knows this one 7';
const KEY = Buffer.from(new Uint8Array(20).map((_, i) => (i * 31 + 5) % 256)).toString('base64');
const totpCode = (h: Harness) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(KEY, 'base64')).buffer }), timestamp: h.now() });

async function attackerPrepares(h: Harness) {
  const user = await h.createUser({ email: VICTIM, password: ATTACKER_PASSWORD });
  expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: totpCode(h) } })).status).toBe(200);
  const authenticator = softAuthenticator();
  await registered(h, user.id, authenticator);
  const recoveryCode = (await h.call('POST', `/users/${user.id}/regenerate-recovery-code`)).json.recovery_code as string;
  const change = await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email: 'attacker@example.com' } });
  expect(change.status).toBe(200);
  const apiKey = await h.call('POST', `/users/${user.id}/api-keys`, { body: { name: 'attacker script' } });
  expect(apiKey.status).toBe(200);
  return { user, authenticator, recoveryCode, change: change.json as { id: string; code: string }, apiKey: apiKey.json.key as string };
}

/** Every credential the attacker set up fails now, and nothing of it is left to list. */
async function expectAttackerLockedOut(h: Harness, a: Awaited<ReturnType<typeof attackerPrepares>>) {
  const id = a.user.id;
  expectError(await h.call('POST', '/authenticate/password', { body: { email: VICTIM, password: ATTACKER_PASSWORD } }), 400, 'INCORRECT_PASSWORD');
  expectError(await h.call('POST', `/users/${id}/verify-password`, { body: { password: ATTACKER_PASSWORD } }), 400, 'INCORRECT_PASSWORD');
  expectError(await h.call('POST', `/users/${id}/reset-2fa`, { body: { recovery_code: a.recoveryCode } }), 400, 'INCORRECT_CODE');
  // The password was never the recovery code either.
  expectError(await h.call('POST', `/users/${id}/reset-2fa`, { body: { recovery_code: 'AAAAAAAAAAAAAAAA' } }), 400, 'INCORRECT_CODE');
  expectError(await h.call('GET', `/users/${id}/totp-credential`), 404, 'NOT_FOUND');
  expect((await h.call('GET', `/users/${id}/passkeys`)).json).toEqual([]);
  expectError(await login(h, a.authenticator), 400, 'PASSKEY_VERIFICATION_FAILED');
  expectError(await h.call('POST', '/verify-new-email', { body: { request_id: a.change.id, code: a.change.code } }), 400, 'INVALID_REQUEST');
  // API keys are credentials too (a careful extension of §15, which predates them): they go with the rest.
  expectError(await h.call('POST', '/verify-api-key', { body: { key: a.apiKey } }), 400, 'INVALID_API_KEY');
  expect((await h.call('GET', `/users/${id}/api-keys`)).json).toEqual([]);
  expect((await h.call('GET', `/users/${id}`)).json).toMatchObject({ email: VICTIM, email_verified: true, registered_totp: false });
}

describe('the first proof of an address (API.md §15)', () => {
  test('a redeemed email sign-in code revokes the password, TOTP, passkeys, API keys, recovery code and pending email changes, with one credentials.revoked', async () => {
    const h = passkeyHarness();
    const a = await attackerPrepares(h);
    // The application emails the code to the address the answer names: the stored one, whatever was typed.
    const created = (await h.call('POST', '/email-sign-in-requests', { body: { email: 'Victim@Example.COM' } })).json;
    expect(created.email).toBe(VICTIM);
    const events = await eventsDuring(h, async () => {
      const signedIn = await h.call('POST', '/authenticate/email-code', { body: { request_id: created.id, code: created.code, client_ip: '203.0.113.5' } });
      expect(signedIn.status).toBe(200);
      expect(signedIn.json).toMatchObject({ id: a.user.id, email_verified: true, registered_totp: false });
    });
    expect(summary(events)).toEqual([
      ['email_code.used', a.user.id, '203.0.113.5'],
      ['credentials.revoked', a.user.id, '203.0.113.5'],
    ]);
    await expectAttackerLockedOut(h, a);
    // The victim sets a password through a reset, and it works.
    const reset = (await h.call('POST', `/users/${a.user.id}/password-reset-requests`, { body: {} })).json;
    expect((await h.call('POST', '/reset-password', { body: { request_id: reset.id, password: STRONG_PASSWORD } })).status).toBe(204);
    expect((await h.call('POST', '/authenticate/password', { body: { email: VICTIM, password: STRONG_PASSWORD } })).status).toBe(200);
  }, 30_000);

  test('/reset-password on an unproven address revokes TOTP, passkeys, API keys, recovery code and pending email changes; its own password stays', async () => {
    const h = passkeyHarness();
    const a = await attackerPrepares(h);
    const reset = (await h.call('POST', `/users/${a.user.id}/password-reset-requests`, { body: {} })).json;
    const events = await eventsDuring(h, async () => {
      expect((await h.call('POST', '/reset-password', { body: { request_id: reset.id, password: STRONG_PASSWORD } })).status).toBe(204);
    });
    expect(summary(events)).toEqual([
      ['password.reset', a.user.id, null],
      ['credentials.revoked', a.user.id, null],
    ]);
    await expectAttackerLockedOut(h, a);
    expect((await h.call('POST', '/authenticate/password', { body: { email: VICTIM, password: STRONG_PASSWORD } })).status).toBe(200);
  }, 30_000);

  test('an address verified already: a sign-in and a reset change nothing of the credentials and write no credentials.revoked', async () => {
    const h = passkeyHarness();
    const a = await attackerPrepares(h);
    // The application's own sign-up confirmation: the password is the confirming person's, nothing is revoked.
    const verification = (await h.call('POST', `/users/${a.user.id}/email-verification-request`)).json;
    const verified = await eventsDuring(h, async () => {
      expect((await h.call('POST', `/users/${a.user.id}/verify-email`, { body: { code: verification.code } })).status).toBe(204);
    });
    expect(summary(verified).map(([type]) => type)).toEqual(['email.verified']);
    const created = (await h.call('POST', '/email-sign-in-requests', { body: { email: VICTIM } })).json;
    const later = await eventsDuring(h, async () => {
      expect((await h.call('POST', '/authenticate/email-code', { body: { request_id: created.id, code: created.code } })).status).toBe(200);
      const reset = (await h.call('POST', `/users/${a.user.id}/password-reset-requests`, { body: {} })).json;
      expect((await h.call('POST', '/reset-password', { body: { request_id: reset.id, password: ATTACKER_PASSWORD } })).status).toBe(204);
    });
    expect(summary(later).map(([type]) => type)).toEqual(['email_code.used', 'password.reset']);
    expect((await h.call('POST', `/users/${a.user.id}/verify-password`, { body: { password: ATTACKER_PASSWORD } })).status).toBe(204);
    expect((await h.call('GET', `/users/${a.user.id}/totp-credential`)).status).toBe(200);
    expect((await h.call('GET', `/users/${a.user.id}/passkeys`)).json).toHaveLength(1);
    expect((await login(h, a.authenticator)).status).toBe(200);
  }, 30_000);

  test('a user without an address: a reset verifies nothing and revokes nothing', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: totpCode(h) } })).status).toBe(200);
    const reset = (await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} })).json;
    const events = await eventsDuring(h, async () => {
      expect((await h.call('POST', '/reset-password', { body: { request_id: reset.id, password: ATTACKER_PASSWORD } })).status).toBe(204);
    });
    expect(summary(events).map(([type]) => type)).toEqual(['password.reset']);
    expect((await h.call('GET', `/users/${user.id}`)).json).toMatchObject({ email_verified: false, registered_totp: true });
  }, 30_000);
});
