import { describe, expect, test } from 'bun:test';
import { sweepExpired } from '../src/code-requests/service';
import { expectError, STRONG_PASSWORD } from './support/harness';
import { rowOf } from './support/rows';
import {
  authenticationOptions,
  challengeExists,
  login,
  passkeyHarness,
  registered,
  registrationOptions,
  secondFactor,
  softAuthenticator,
  tables,
} from './support/passkeys';

/** Concurrency, the login block shared with passwords, the second-factor lockout, and the sweep (API.md §13, §5). */
const FIFTEEN_MINUTES = 15 * 60 * 1000;

describe('a challenge is redeemed once, also in parallel', () => {
  test('the same assertion sent 10 times at once: exactly one 200', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    const passkey = await registered(h, user.id, authenticator);
    const { challenge_id, options } = await authenticationOptions(h);
    const response = await authenticator.authenticate(options);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', '/authenticate/passkey', { body: { challenge_id, response } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    for (const answer of answers.filter((a) => a.status !== 200)) expect(answer.json).toEqual({ error: 'INVALID_REQUEST' });
    expect((await rowOf(h, 'passkeys', { id: passkey.id }))?.counter).toBe(1);
    expect(await challengeExists(h, challenge_id)).toBe(false);
  });

  test('the same registration and the same second factor sent 10 times at once: one success each', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    const { challenge_id, options } = await registrationOptions(h, user.id);
    const created = await authenticator.register(options);
    const registrations = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', `/users/${user.id}/passkeys`, { body: { challenge_id, response: created } })),
    );
    expect(registrations.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(400)]);
    expect((await tables(h)).passkeys).toHaveLength(1);
    const second = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
    const asserted = await authenticator.authenticate(second.options);
    const verifies = await Promise.all(
      Array.from({ length: 10 }, () => h.call('POST', `/users/${user.id}/verify-2fa/passkey`, { body: { challenge_id: second.challenge_id, response: asserted } })),
    );
    expect(verifies.map((a) => a.status).sort()).toEqual([204, ...Array(9).fill(400)]);
  });

  test('a use whose counter was overtaken meanwhile is stale, and still uses its challenge up', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const passkey = await registered(h, user.id, softAuthenticator());
    const [first, second] = [await authenticationOptions(h), await authenticationOptions(h)];
    const use = (challengeId: string, counter: number) => h.stores.passkeys.use(challengeId, { passkeyId: passkey.id, counter, backedUp: false, nowSeconds: h.now() / 1000 }, () => [], () => false);
    expect(await use(first.challenge_id, 5)).toBe('used');
    expect(await use(second.challenge_id, 4)).toBe('stale');
    expect(await challengeExists(h, second.challenge_id)).toBe(false);
    expect(await use(second.challenge_id, 9)).toBe('gone');
    expect((await rowOf(h, 'passkeys', { id: passkey.id }))?.counter).toBe(5);
  });
});

describe('the login block of an address, shared with passwords', () => {
  test('5 failed passkey logins from one client_ip block its passwords and passkeys; other addresses pass', async () => {
    const h = passkeyHarness();
    const user = await h.createUser({ email: 'blocked@example.com' });
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const ip = '203.0.113.9';
    for (let i = 0; i < 5; i++) {
      const { challenge_id, options } = await authenticationOptions(h);
      const response = await authenticator.authenticate(options, { tamperSignature: true });
      expectError(await h.call('POST', '/authenticate/passkey', { body: { challenge_id, response, client_ip: ip } }), 400, 'PASSKEY_VERIFICATION_FAILED');
      h.advance(10_000); // one address token back
    }
    const password = await h.call('POST', '/authenticate/password', { body: { email: 'blocked@example.com', password: STRONG_PASSWORD, client_ip: ip } });
    expectError(password, 400, 'TOO_MANY_REQUESTS');
    expect(Number(password.headers.get('retry-after'))).toBe(15 * 60 - 10); // from the 5th failure
    // A valid assertion is refused too, and its challenge stays for later.
    const { challenge_id, options } = await authenticationOptions(h);
    const response = await authenticator.authenticate(options);
    expectError(await h.call('POST', '/authenticate/passkey', { body: { challenge_id, response, client_ip: ip } }), 400, 'TOO_MANY_REQUESTS');
    expect(await challengeExists(h, challenge_id)).toBe(true);
    expect((await h.call('POST', '/authenticate/passkey', { body: { challenge_id, response, client_ip: '198.51.100.1' } })).status).toBe(200);
    h.advance(FIFTEEN_MINUTES);
    expect((await login(h, authenticator, { clientIp: ip })).status).toBe(200);
  });

  test('5 wrong passwords from one client_ip block its passkey logins; unknown challenges do not count', async () => {
    const h = passkeyHarness();
    const user = await h.createUser({ email: 'pw@example.com' });
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const ip = '2001:db8::7';
    for (let i = 0; i < 4; i++) {
      expectError(await h.call('POST', '/authenticate/password', { body: { email: 'pw@example.com', password: 'wrong password 123', client_ip: ip } }), 400, 'INCORRECT_PASSWORD');
      h.advance(10_000);
    }
    const { challenge_id, options } = await authenticationOptions(h);
    const response = await authenticator.authenticate(options);
    expectError(await h.call('POST', '/authenticate/passkey', { body: { challenge_id: 'unknown', response, client_ip: ip } }), 400, 'INVALID_REQUEST');
    expect((await h.call('POST', '/authenticate/passkey', { body: { challenge_id, response, client_ip: ip } })).status).toBe(200);
    h.advance(10_000);
    expectError(await h.call('POST', '/authenticate/password', { body: { email: 'pw@example.com', password: 'wrong password 123', client_ip: ip } }), 400, 'INCORRECT_PASSWORD');
    h.advance(10_000);
    expectError(await login(h, authenticator, { clientIp: '2001:db8::8' }), 400, 'TOO_MANY_REQUESTS'); // the same /64
  });

  test('passkey-authentication-options spends the address token', async () => {
    const h = passkeyHarness();
    for (let i = 0; i < 5; i++) await authenticationOptions(h, { client_ip: '192.0.2.1' });
    const before = await tables(h);
    const res = await h.call('POST', '/passkey-authentication-options', { body: { client_ip: '192.0.2.1' } });
    expectError(res, 400, 'TOO_MANY_REQUESTS');
    expect(Number(res.headers.get('retry-after'))).toBe(10);
    expect(await tables(h)).toEqual(before);
    await authenticationOptions(h, { client_ip: '192.0.2.2' });
  });
});

describe('the second factor lockout of a user', () => {
  test('5 failures lock it for 15 minutes, valid passkeys included; a success clears the count', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const fail = async () => expectError(await secondFactor(h, user.id, authenticator, { tamperSignature: true }), 400, 'PASSKEY_VERIFICATION_FAILED');
    for (let i = 0; i < 4; i++) await fail();
    expect((await secondFactor(h, user.id, authenticator)).status).toBe(204);
    for (let i = 0; i < 5; i++) await fail();
    const { challenge_id, options } = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
    const response = await authenticator.authenticate(options);
    const locked = await h.call('POST', `/users/${user.id}/verify-2fa/passkey`, { body: { challenge_id, response } });
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(Number(locked.headers.get('retry-after'))).toBe(15 * 60);
    expect(await challengeExists(h, challenge_id)).toBe(true);
    // Another user, and the passwordless login of this one, are not locked.
    expect((await login(h, authenticator)).status).toBe(200);
    h.advance(FIFTEEN_MINUTES);
    expect((await secondFactor(h, user.id, authenticator)).status).toBe(204);
  });

  test('parallel failures are checked one at a time: 10 at once → 5 counted, 5 refused', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    const attempts = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const { challenge_id, options } = await authenticationOptions(h, { user_id: user.id, purpose: 'second_factor' });
        const response = await authenticator.authenticate(options, { tamperSignature: true });
        return h.call('POST', `/users/${user.id}/verify-2fa/passkey`, { body: { challenge_id, response } });
      }),
    );
    const codes = attempts.map((a) => a.json.error).sort();
    expect(codes).toEqual([...Array(5).fill('PASSKEY_VERIFICATION_FAILED'), ...Array(5).fill('TOO_MANY_REQUESTS')]);
  });
});

describe('sweep', () => {
  test('expired challenges are deleted with the expired requests; live ones stay', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const old = await registrationOptions(h, user.id);
    await authenticationOptions(h);
    h.advance(200_000);
    const fresh = await authenticationOptions(h);
    expect(await sweepExpired(h.stores.codeRequests, h.now())).toBe(0);
    h.advance(100_000);
    expect(await sweepExpired(h.stores.codeRequests, h.now())).toBe(2);
    expect(await challengeExists(h, old.challenge_id)).toBe(false);
    expect(await challengeExists(h, fresh.challenge_id)).toBe(true);
  });
});
