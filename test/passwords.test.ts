import { describe, expect, test } from 'bun:test';
import { createHarness, expectError, type Harness, STRONG_PASSWORD, WEAK_PASSWORD } from './support/harness';
import { rowOf, updateRows } from './support/rows';

const NEW_PASSWORD = 'another strong password 2';
const WRONG_PASSWORD = 'not the right password';
const FIFTEEN_MINUTES = 15 * 60 * 1000;
/** Long enough for the address bucket to refill completely, so only the login block is in play. */
const BUCKET_REFILL = 60_000;

const authenticate = (h: Harness, body: Record<string, unknown>) => h.call('POST', '/authenticate/password', { body });
const verify = (h: Harness, id: string, body: Record<string, unknown>) => h.call('POST', `/users/${id}/verify-password`, { body });
const update = (h: Harness, id: string, body: Record<string, unknown>) => h.call('POST', `/users/${id}/update-password`, { body });

describe('POST /authenticate/password', () => {
  test('200 with the user model for the right email and password', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'auth@example.com' });
    const res = await authenticate(h, { email: 'auth@example.com', password: STRONG_PASSWORD });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: user.id, created_at: user.created_at, email: 'auth@example.com', email_verified: false, registered_totp: false, passkey_count: 0, disabled: false, disabled_until: null });
  });

  test('the email is matched case-insensitively', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'MiXed@Example.com' });
    expect((await authenticate(h, { email: 'mixed@example.COM', password: STRONG_PASSWORD })).json.id).toBe(user.id);
  });

  test('unknown email → 404 NOT_FOUND; wrong password → INCORRECT_PASSWORD', async () => {
    const h = createHarness();
    await h.createUser({ email: 'known@example.com' });
    expectError(await authenticate(h, { email: 'unknown@example.com', password: STRONG_PASSWORD }), 404, 'NOT_FOUND');
    expectError(await authenticate(h, { email: 'known@example.com', password: WRONG_PASSWORD }), 400, 'INCORRECT_PASSWORD');
  });

  test('a user without an email cannot be found by email', async () => {
    const h = createHarness();
    await h.createUser();
    expectError(await authenticate(h, { email: 'null@example.com', password: STRONG_PASSWORD }), 404, 'NOT_FOUND');
  });

  test.each([
    ['an empty body', {}],
    ['no email', { password: STRONG_PASSWORD }],
    ['no password', { email: 'auth@example.com' }],
    ['a malformed email', { email: 'not-an-email', password: STRONG_PASSWORD }],
    ['an email with a trailing space', { email: 'auth@example.com ', password: STRONG_PASSWORD }],
    ['email null', { email: null, password: STRONG_PASSWORD }],
    ['a 7-character password', { email: 'auth@example.com', password: 'short12' }],
    ['a 128-character password', { email: 'auth@example.com', password: 'p'.repeat(128) }],
    ['password as a number', { email: 'auth@example.com', password: 12345678 }],
    ['client_ip of 65 characters', { email: 'auth@example.com', password: STRONG_PASSWORD, client_ip: '1'.repeat(65) }],
  ])('%s → INVALID_DATA', async (_, body) => {
    const h = createHarness();
    expectError(await authenticate(h, body), 400, 'INVALID_DATA');
  });
});

describe('POST /users/{id}/verify-password', () => {
  test('204 for the right password, INCORRECT_PASSWORD for a wrong one', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const ok = await verify(h, user.id, { password: STRONG_PASSWORD });
    expect(ok.status).toBe(204);
    expect(ok.text).toBe('');
    expectError(await verify(h, user.id, { password: WRONG_PASSWORD }), 400, 'INCORRECT_PASSWORD');
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD.toUpperCase() }), 400, 'INCORRECT_PASSWORD');
    expectError(await verify(h, user.id, { password: `${STRONG_PASSWORD} ` }), 400, 'INCORRECT_PASSWORD');
  });

  test('passwords are compared exactly as given, without Unicode normalisation', async () => {
    const h = createHarness();
    const composed = 'caf\u00e9 au lait ok';
    const decomposed = 'cafe\u0301 au lait ok';
    const user = await h.createUser({ password: composed });
    expect((await verify(h, user.id, { password: composed })).status).toBe(204);
    expectError(await verify(h, user.id, { password: decomposed }), 400, 'INCORRECT_PASSWORD');
  });

  test('unknown user → 404 NOT_FOUND', async () => {
    const h = createHarness();
    expectError(await verify(h, 'nosuchuser', { password: STRONG_PASSWORD }), 404, 'NOT_FOUND');
  });

  test.each([
    ['an empty body', {}],
    ['a 7-character password', { password: 'short12' }],
    ['a 128-character password', { password: 'p'.repeat(128) }],
    ['password as an array', { password: [STRONG_PASSWORD] }],
    ['client_ip as a number', { password: STRONG_PASSWORD, client_ip: 1 }],
  ])('%s → INVALID_DATA', async (_, body) => {
    const h = createHarness();
    const user = await h.createUser();
    expectError(await verify(h, user.id, body), 400, 'INVALID_DATA');
  });
});

describe('POST /users/{id}/update-password', () => {
  test('204, then the new password verifies and the old one does not; other state is kept', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'update@example.com' });
    await updateRows(h, 'users', { emailVerified: true }, { id: user.id });
    const before = (await rowOf(h, 'users', { id: user.id }))!;
    const res = await update(h, user.id, { password: STRONG_PASSWORD, new_password: NEW_PASSWORD });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await verify(h, user.id, { password: NEW_PASSWORD })).status).toBe(204);
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD }), 400, 'INCORRECT_PASSWORD');
    expect((await authenticate(h, { email: 'update@example.com', password: NEW_PASSWORD })).json).toMatchObject({ id: user.id, email_verified: true });
    const after = (await rowOf(h, 'users', { id: user.id }))!;
    expect(after.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,/);
    expect({ ...after, passwordHash: '' }).toEqual({ ...before, passwordHash: '' });
  });

  test('wrong current password → INCORRECT_PASSWORD and nothing changes', async () => {
    const h = createHarness();
    const user = await h.createUser();
    expectError(await update(h, user.id, { password: WRONG_PASSWORD, new_password: NEW_PASSWORD }), 400, 'INCORRECT_PASSWORD');
    expect((await verify(h, user.id, { password: STRONG_PASSWORD })).status).toBe(204);
    expectError(await verify(h, user.id, { password: NEW_PASSWORD }), 400, 'INCORRECT_PASSWORD');
  });

  test('a breached new password → WEAK_PASSWORD and nothing changes', async () => {
    const h = createHarness();
    const user = await h.createUser();
    expectError(await update(h, user.id, { password: STRONG_PASSWORD, new_password: WEAK_PASSWORD }), 400, 'WEAK_PASSWORD');
    expect((await verify(h, user.id, { password: STRONG_PASSWORD })).status).toBe(204);
  });

  test('unknown user → 404 NOT_FOUND', async () => {
    const h = createHarness();
    expectError(await update(h, 'nosuchuser', { password: STRONG_PASSWORD, new_password: NEW_PASSWORD }), 404, 'NOT_FOUND');
  });

  test.each([
    ['an empty body', {}],
    ['no new_password', { password: STRONG_PASSWORD }],
    ['no current password', { new_password: NEW_PASSWORD }],
    ['a 7-character new password', { password: STRONG_PASSWORD, new_password: 'short12' }],
    ['a 128-character new password', { password: STRONG_PASSWORD, new_password: 'n'.repeat(128) }],
    ['a 7-character current password', { password: 'short12', new_password: NEW_PASSWORD }],
    ['new_password as null', { password: STRONG_PASSWORD, new_password: null }],
    ['new_password as a number', { password: STRONG_PASSWORD, new_password: 123456789 }],
  ])('%s → INVALID_DATA', async (_, body) => {
    const h = createHarness();
    const user = await h.createUser();
    expectError(await update(h, user.id, body), 400, 'INVALID_DATA');
    expect((await verify(h, user.id, { password: STRONG_PASSWORD })).status).toBe(204);
  });
});

describe('login block', () => {
  const IP = '192.0.2.10';

  /** Four incorrect passwords from IP, a minute apart: one short of the block. */
  async function failFourTimes(h: Harness, userId: string) {
    for (let i = 0; i < 4; i++) {
      h.advance(BUCKET_REFILL);
      expectError(await verify(h, userId, { password: WRONG_PASSWORD, client_ip: IP }), 400, 'INCORRECT_PASSWORD');
    }
  }

  test('parallel wrong passwords from one address cannot slip past the block', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await failFourTimes(h, user.id);
    h.advance(BUCKET_REFILL); // the bucket is full again: five tokens for five parallel guesses
    const results = await Promise.all(Array.from({ length: 5 }, () => verify(h, user.id, { password: WRONG_PASSWORD, client_ip: IP })));
    expect(results.map((r) => r.json.error).sort()).toEqual(['INCORRECT_PASSWORD', ...Array(4).fill('TOO_MANY_REQUESTS')]);
  });

  /** Five incorrect passwords from IP, a minute apart, one through each password endpoint in turn. */
  async function blockAddress(h: Harness, userId: string, email: string, ip = IP) {
    const failures = [
      () => verify(h, userId, { password: WRONG_PASSWORD, client_ip: ip }),
      () => update(h, userId, { password: WRONG_PASSWORD, new_password: NEW_PASSWORD, client_ip: ip }),
      () => authenticate(h, { email, password: WRONG_PASSWORD, client_ip: ip }),
      () => authenticate(h, { email: 'nobody@example.com', password: WRONG_PASSWORD, client_ip: ip }),
      () => verify(h, userId, { password: WRONG_PASSWORD, client_ip: ip }),
    ];
    for (const fail of failures) {
      h.advance(BUCKET_REFILL);
      const res = await fail();
      expect(['INCORRECT_PASSWORD', 'NOT_FOUND']).toContain(res.json.error);
    }
  }

  test('5 incorrect passwords from one address block every password check from it, even the right one', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'blocked@example.com' });
    await blockAddress(h, user.id, 'blocked@example.com');
    h.advance(BUCKET_REFILL);
    const checks = [
      () => verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP }),
      () => update(h, user.id, { password: STRONG_PASSWORD, new_password: NEW_PASSWORD, client_ip: IP }),
      () => authenticate(h, { email: 'blocked@example.com', password: STRONG_PASSWORD, client_ip: IP }),
    ];
    for (const check of checks) {
      const res = await check();
      expectError(res, 400, 'TOO_MANY_REQUESTS');
      expect(Number(res.headers.get('retry-after'))).toBe((FIFTEEN_MINUTES - BUCKET_REFILL) / 1000);
    }
    // The refused update changed nothing.
    expect((await verify(h, user.id, { password: STRONG_PASSWORD })).status).toBe(204);
    // Other addresses, and calls without an address, are unaffected.
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: '192.0.2.11' })).status).toBe(204);
    expect((await authenticate(h, { email: 'blocked@example.com', password: STRONG_PASSWORD, client_ip: '192.0.2.12' })).status).toBe(200);
  });

  test('four failures do not block', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await failFourTimes(h, user.id);
    h.advance(BUCKET_REFILL);
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
  });

  test('the block lifts 15 minutes after the 5th failure', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'lift@example.com' });
    await blockAddress(h, user.id, 'lift@example.com');
    const fifthFailure = h.now();
    h.setNow(fifthFailure + FIFTEEN_MINUTES - 1);
    const stillBlocked = await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP });
    expectError(stillBlocked, 400, 'TOO_MANY_REQUESTS');
    expect(stillBlocked.headers.get('retry-after')).toBe('1');
    h.setNow(fifthFailure + FIFTEEN_MINUTES);
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
  });

  test('failures older than 15 minutes do not count', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const fail = () => verify(h, user.id, { password: WRONG_PASSWORD, client_ip: IP });
    const first = h.now();
    expectError(await fail(), 400, 'INCORRECT_PASSWORD');
    for (let i = 0; i < 3; i++) {
      h.advance(BUCKET_REFILL);
      expectError(await fail(), 400, 'INCORRECT_PASSWORD');
    }
    // The first failure has just left the window when the fifth arrives.
    h.setNow(first + FIFTEEN_MINUTES);
    expectError(await fail(), 400, 'INCORRECT_PASSWORD');
    h.advance(10_000);
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
    // One more failure, while the other four are still inside the window, makes five.
    h.advance(10_000);
    expectError(await fail(), 400, 'INCORRECT_PASSWORD');
    h.advance(10_000);
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP }), 400, 'TOO_MANY_REQUESTS');
  });

  test('unknown-email failures count', async () => {
    const h = createHarness();
    const user = await h.createUser();
    for (let i = 0; i < 5; i++) {
      h.advance(BUCKET_REFILL);
      expectError(await authenticate(h, { email: `ghost${i}@example.com`, password: STRONG_PASSWORD, client_ip: IP }), 404, 'NOT_FOUND');
    }
    h.advance(BUCKET_REFILL);
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP }), 400, 'TOO_MANY_REQUESTS');
  });

  test('a success does not clear the count', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await failFourTimes(h, user.id);
    h.advance(BUCKET_REFILL);
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
    h.advance(BUCKET_REFILL);
    expectError(await verify(h, user.id, { password: WRONG_PASSWORD, client_ip: IP }), 400, 'INCORRECT_PASSWORD');
    h.advance(BUCKET_REFILL);
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP }), 400, 'TOO_MANY_REQUESTS');
  });

  test('IPv6 addresses in one /64 share a block; the next /64 does not', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'six@example.com' });
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::5', '2001:DB8:1:2:a:b:c:d', '2001:0db8:0001:0002::9', '[2001:db8:1:2::7]'];
    for (const ip of sameNetwork) {
      h.advance(BUCKET_REFILL);
      expectError(await verify(h, user.id, { password: WRONG_PASSWORD, client_ip: ip }), 400, 'INCORRECT_PASSWORD');
    }
    h.advance(BUCKET_REFILL);
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: '2001:db8:1:2::abcd' }), 400, 'TOO_MANY_REQUESTS');
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: '2001:db8:1:3::1' })).status).toBe(204);
  });

  test('when the address is out of tokens and blocked too, Retry-After names the block, the longer wait (API.md §2)', async () => {
    const h = createHarness();
    const user = await h.createUser();
    // Five wrong passwords in quick succession: they empty the bucket and start the block at once.
    for (let i = 0; i < 5; i++) expectError(await verify(h, user.id, { password: WRONG_PASSWORD, client_ip: IP }), 400, 'INCORRECT_PASSWORD');
    h.advance(1_000);
    const both = await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP });
    expectError(both, 400, 'TOO_MANY_REQUESTS');
    expect(both.headers.get('retry-after')).toBe(String(FIFTEEN_MINUTES / 1000 - 1));
    // Once the bucket has a token again, the block alone still refuses, with the same remaining time.
    h.advance(BUCKET_REFILL);
    const blockOnly = await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP });
    expect(blockOnly.headers.get('retry-after')).toBe(String((FIFTEEN_MINUTES - BUCKET_REFILL) / 1000 - 1));
  });

  test('NAT64 addresses (64:ff9b::/96) are limited by their embedded IPv4 address, not one shared /64', async () => {
    const h = createHarness();
    const user = await h.createUser();
    for (let i = 0; i < 5; i++) {
      h.advance(BUCKET_REFILL);
      expectError(await verify(h, user.id, { password: WRONG_PASSWORD, client_ip: '64:ff9b::198.51.100.7' }), 400, 'INCORRECT_PASSWORD');
    }
    h.advance(BUCKET_REFILL);
    // The same IPv4 client, however its address is written, is blocked...
    for (const ip of ['64:ff9b::c633:6407', '64:FF9B:0:0:0:0:198.51.100.7', '[64:ff9b::198.51.100.7]']) {
      expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: ip }), 400, 'TOO_MANY_REQUESTS');
    }
    // ...and so is that address sent as plain IPv4; other IPv4 clients behind the same gateway are not.
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: '198.51.100.7' }), 400, 'TOO_MANY_REQUESTS');
    for (const ip of ['64:ff9b::198.51.100.8', '64:ff9b::c633:6409', '::ffff:198.51.100.10']) {
      expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: ip })).status).toBe(204);
    }
    // An address outside the /96 (here 64:ff9b:1::/48, the local-use prefix) is still a /64.
    for (let i = 1; i <= 5; i++) {
      h.advance(BUCKET_REFILL);
      expectError(await verify(h, user.id, { password: WRONG_PASSWORD, client_ip: `64:ff9b:1::${i}` }), 400, 'INCORRECT_PASSWORD');
    }
    expectError(await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: '64:ff9b:1::99' }), 400, 'TOO_MANY_REQUESTS');
  });

  test('IPv6 addresses in one /64 also share the address bucket', async () => {
    const h = createHarness();
    for (let i = 1; i <= 5; i++) {
      expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: `2001:db8:aa:bb::${i}` } }), 400, 'WEAK_PASSWORD');
    }
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '2001:db8:aa:bb:1:2:3:4' } }), 400, 'TOO_MANY_REQUESTS');
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '2001:db8:aa:bc::1' } }), 400, 'WEAK_PASSWORD');
  });

  test('without client_ip no limit applies', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'free@example.com' });
    for (let i = 0; i < 8; i++) {
      expectError(await verify(h, user.id, { password: WRONG_PASSWORD }), 400, 'INCORRECT_PASSWORD');
      expectError(await authenticate(h, { email: 'free@example.com', password: WRONG_PASSWORD, client_ip: '' }), 400, 'INCORRECT_PASSWORD');
    }
    expect((await verify(h, user.id, { password: STRONG_PASSWORD })).status).toBe(204);
    expect((await authenticate(h, { email: 'free@example.com', password: STRONG_PASSWORD, client_ip: null })).status).toBe(200);
  });

  test('the address bucket applies to password checks too: 5 per address, then one every 10 s', async () => {
    const h = createHarness();
    const user = await h.createUser();
    for (let i = 0; i < 5; i++) expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
    const limited = await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP });
    expectError(limited, 400, 'TOO_MANY_REQUESTS');
    expect(limited.headers.get('retry-after')).toBe('10');
    h.advance(10_000);
    expect((await verify(h, user.id, { password: STRONG_PASSWORD, client_ip: IP })).status).toBe(204);
  });
});
