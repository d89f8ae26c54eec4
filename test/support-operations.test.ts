import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { addressKey } from '../src/limits/address-key';
import { allowEvents, eventsDuring, refuseEvents, summary } from './support/events';
import { createHarness, expectError, STRONG_PASSWORD, type Harness } from './support/harness';
import { rowOf } from './support/rows';
import { FastHasher } from './fuzz/seed';

/** API.md §14: POST /users/{id}/clear-lockouts and POST /clear-address-limits. */

const KEY = Buffer.from(new Uint8Array(20).map((_, i) => (i * 13 + 5) % 256)).toString('base64');
const totpAt = (ms: number) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(KEY, 'base64')).buffer }), timestamp: ms });
const wrongTotp = (ms: number) => ['000000', '111111', '222222'].find((c) => ![-1, 0, 1].map((d) => totpAt(ms + d * 30_000)).includes(c))!;

async function setup() {
  const h = createHarness({ hasher: new FastHasher() });
  await h.ready;
  const user = await h.createUser({ email: 'ada@example.com' });
  expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: totpAt(h.now()) } })).status).toBe(200);
  h.advance(30_000);
  const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
  return { h, user, during };
}

const post = (h: Harness, path: string, body?: unknown) => h.call('POST', path, body === undefined ? {} : { body });
const clearLockouts = (h: Harness, id: string) => post(h, `/users/${id}/clear-lockouts`);
const clearAddress = (h: Harness, body: unknown) => post(h, '/clear-address-limits', body);

describe('POST /users/{id}/clear-lockouts', () => {
  test('ends the second-factor lockouts at once, with one lockouts.cleared event', async () => {
    const { h, user, during } = await setup();
    const verify = (code: string) => post(h, `/users/${user.id}/verify-2fa/totp`, { code });
    for (let i = 0; i < 5; i++) expectError(await verify(wrongTotp(h.now())), 400, 'INCORRECT_CODE');
    expectError(await verify(totpAt(h.now())), 400, 'TOO_MANY_REQUESTS');
    for (let i = 0; i < 5; i++) expectError(await post(h, `/users/${user.id}/reset-2fa`, { recovery_code: 'AAAAAAAAAAAAAAAA' }), 400, 'INCORRECT_CODE');
    expectError(await post(h, `/users/${user.id}/reset-2fa`, { recovery_code: user.recovery_code }), 400, 'TOO_MANY_REQUESTS');
    let res: Awaited<ReturnType<typeof clearLockouts>> | undefined;
    expect(await during(async () => (res = await clearLockouts(h, user.id)))).toEqual([['lockouts.cleared', user.id, null]]);
    expect(res!.status).toBe(204);
    expect(res!.text).toBe('');
    expect((await verify(totpAt(h.now()))).status).toBe(204);
    // The count starts from zero again: four wrong codes do not lock.
    for (let i = 0; i < 4; i++) expectError(await post(h, `/users/${user.id}/reset-2fa`, { recovery_code: 'AAAAAAAAAAAAAAAA' }), 400, 'INCORRECT_CODE');
    expect((await post(h, `/users/${user.id}/reset-2fa`, { recovery_code: user.recovery_code })).status).toBe(200);
  });

  test('ends the request-creation limits (reset, verification, update, sign-in)', async () => {
    const { h, user } = await setup();
    const creations = [
      () => post(h, `/users/${user.id}/password-reset-requests`),
      () => post(h, `/users/${user.id}/email-verification-request`),
      () => post(h, `/users/${user.id}/email-update-requests`, { email: 'new@example.com' }),
      () => post(h, '/email-sign-in-requests', { email: 'ada@example.com' }),
    ];
    for (const create of creations) {
      for (let i = 0; i < 3; i++) expect((await create()).status).toBe(200);
      expectError(await create(), 400, 'TOO_MANY_REQUESTS');
    }
    expect((await clearLockouts(h, user.id)).status).toBe(204);
    for (const create of creations) expect((await create()).status).toBe(200);
  });

  test("leaves other users, the address's login block and a request's own wrong-code count alone", async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    await h.deps.limits.totpVerify.recordFailure(other.id);
    for (let i = 0; i < 5; i++) await h.deps.limits.totpVerify.recordFailure(other.id);
    for (let i = 0; i < 5; i++) await h.deps.limits.loginBlock.recordFailure(addressKey('203.0.113.5'));
    const reset = (await post(h, `/users/${user.id}/password-reset-requests`)).json as { id: string };
    for (let i = 0; i < 3; i++) expectError(await post(h, `/password-reset-requests/${reset.id}/verify-email`, { code: 'AAAAAAAA' }), 400, 'INCORRECT_CODE');
    expect((await clearLockouts(h, user.id)).status).toBe(204);
    expect((await h.deps.limits.totpVerify.check(other.id)).ok).toBe(false);
    expect((await h.deps.limits.loginBlock.check(addressKey('203.0.113.5'))).ok).toBe(false);
    expect((await rowOf(h, 'passwordResetRequests', { id: reset.id }))?.failedAttempts).toBe(3);
  });

  test('an unknown user is NOT_FOUND; any body is ignored; a failed event write answers 500', async () => {
    const { h, user } = await setup();
    expectError(await clearLockouts(h, 'nobody'), 404, 'NOT_FOUND');
    expect((await h.call('POST', `/users/${user.id}/clear-lockouts`, { rawBody: 'not json' })).status).toBe(204);
    await refuseEvents(h);
    expect((await clearLockouts(h, user.id)).status).toBe(500);
    await allowEvents(h);
  });

  test('a disabled user can have its lockouts cleared', async () => {
    const { h, user } = await setup();
    await post(h, `/users/${user.id}/disable`);
    expect((await clearLockouts(h, user.id)).status).toBe(204);
  });
});

describe('clear-lockouts racing wrong codes: counts stay exact', () => {
  test("a request's own wrong-code count is untouched: the 5th wrong code still invalidates it", async () => {
    const { h, user } = await setup();
    const reset = (await post(h, `/users/${user.id}/password-reset-requests`)).json as { id: string };
    const wrong = () => post(h, `/password-reset-requests/${reset.id}/verify-email`, { code: 'AAAAAAAA' });
    const answers = await Promise.all([wrong(), clearLockouts(h, user.id), wrong(), clearLockouts(h, user.id), wrong(), wrong(), clearLockouts(h, user.id)]);
    expect(answers.map((a) => a.status)).toEqual([400, 204, 400, 204, 400, 400, 204]);
    expect((await rowOf(h, 'passwordResetRequests', { id: reset.id }))?.failedAttempts).toBe(4);
    expectError(await wrong(), 400, 'INCORRECT_CODE');
    expectError(await wrong(), 404, 'NOT_FOUND');
  });

  test('a lockout counts each wrong code once, before or after the clear, never lost or twice', async () => {
    for (let round = 0; round < 3; round++) {
      const { h, user } = await setup();
      const verify = () => post(h, `/users/${user.id}/verify-2fa/totp`, { code: wrongTotp(h.now()) });
      for (let i = 0; i < 4; i++) expectError(await verify(), 400, 'INCORRECT_CODE');
      // Three wrong codes and a clear at once: c of them land after the clear (0 to 3), so the lock comes after 5 - c more.
      const raced = await Promise.all([verify(), verify(), clearLockouts(h, user.id), verify()]);
      expect(raced.map((a) => a.status)).toEqual([400, 400, 204, 400]);
      for (const a of [raced[0]!, raced[1]!, raced[3]!]) expect(['INCORRECT_CODE', 'TOO_MANY_REQUESTS']).toContain(a.json.error);
      expect((await h.deps.limits.totpVerify.check(user.id)).ok).toBe(true);
      const countedAfter = [raced[0]!, raced[1]!, raced[3]!].filter((a) => a.json.error === 'INCORRECT_CODE').length;
      let more = 0;
      while ((await h.deps.limits.totpVerify.check(user.id)).ok) {
        expectError(await verify(), 400, 'INCORRECT_CODE');
        more++;
        expect(more).toBeLessThanOrEqual(5);
      }
      // Exactly 5 counted since the clear: between 2 and 5 more, and never fewer than the codes that could have landed after it allow.
      expect(more).toBeGreaterThanOrEqual(2);
      expect(more).toBeGreaterThanOrEqual(5 - countedAfter);
    }
  });
});

describe('POST /clear-address-limits', () => {
  const verify = (h: Harness, id: string, password: string, ip: string) => post(h, `/users/${id}/verify-password`, { password, client_ip: ip });

  test("lifts the address's login block, with an address.cleared event carrying that client_ip", async () => {
    const { h, user, during } = await setup();
    const ip = '198.51.100.20';
    for (let i = 0; i < 5; i++) {
      h.advance(10_000);
      expectError(await verify(h, user.id, 'not the password', ip), 400, 'INCORRECT_PASSWORD');
    }
    h.advance(10_000);
    expectError(await verify(h, user.id, STRONG_PASSWORD, ip), 400, 'TOO_MANY_REQUESTS');
    let res: Awaited<ReturnType<typeof clearAddress>> | undefined;
    expect(await during(async () => (res = await clearAddress(h, { client_ip: ip })))).toEqual([['address.cleared', null, ip]]);
    expect(res!.status).toBe(204);
    expect((await verify(h, user.id, STRONG_PASSWORD, ip)).status).toBe(204);
    // The failures went with the block: four more do not block again.
    for (let i = 0; i < 4; i++) expectError(await verify(h, user.id, 'not the password', ip), 400, 'INCORRECT_PASSWORD');
  });

  test('refills the bucket at once', async () => {
    const { h } = await setup();
    const ip = '198.51.100.21';
    const create = () => post(h, '/users', { password: STRONG_PASSWORD, client_ip: ip });
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(200);
    expectError(await create(), 400, 'TOO_MANY_REQUESTS');
    expect((await clearAddress(h, { client_ip: ip })).status).toBe(204);
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(200);
    expectError(await create(), 400, 'TOO_MANY_REQUESTS');
  });

  test('the same key rules as §9: any address of the /64, and an IPv4 address in its IPv6 forms', async () => {
    const { h } = await setup();
    const cases = [
      ['2001:db8:1:2::7', '2001:db8:1:2:ffff::1'],
      ['192.0.2.9', '::ffff:192.0.2.9'],
      ['::ffff:192.0.2.10', '192.0.2.10'],
      ['192.0.2.11', '64:ff9b::192.0.2.11'],
      ['not an ip', 'not an ip'],
    ];
    for (const [blocked, cleared] of cases) {
      for (let i = 0; i < 5; i++) await h.deps.limits.loginBlock.recordFailure(addressKey(blocked!));
      for (let i = 0; i < 5; i++) await h.deps.limits.address.consume(addressKey(blocked!));
      expect((await clearAddress(h, { client_ip: cleared })).status).toBe(204);
      expect({ blocked, block: (await h.deps.limits.loginBlock.check(addressKey(blocked!))).ok, bucket: (await h.deps.limits.address.consume(addressKey(blocked!))).ok }).toEqual({ blocked, block: true, bucket: true });
    }
    // Another /64 is another address.
    for (let i = 0; i < 5; i++) await h.deps.limits.loginBlock.recordFailure(addressKey('2001:db8:1:3::1'));
    await clearAddress(h, { client_ip: '2001:db8:1:4::1' });
    expect((await h.deps.limits.loginBlock.check(addressKey('2001:db8:1:3::1'))).ok).toBe(false);
  });

  test('client_ip is required: missing, empty, null, not a string or over 64 characters is INVALID_DATA and clears nothing', async () => {
    const { h, during } = await setup();
    for (let i = 0; i < 5; i++) await h.deps.limits.loginBlock.recordFailure(addressKey('203.0.113.77'));
    for (const body of [{}, { client_ip: '' }, { client_ip: null }, { client_ip: 7 }, { client_ip: ['203.0.113.77'] }, { client_ip: 'x'.repeat(65) }, { client_ip: '\ud800' }]) {
      expect({ body, events: await during(async () => expectError(await clearAddress(h, body), 400, 'INVALID_DATA')) }).toEqual({ body, events: [] });
    }
    expectError(await h.call('POST', '/clear-address-limits', { rawBody: '"203.0.113.77"' }), 400, 'INVALID_DATA');
    expect((await h.deps.limits.loginBlock.check(addressKey('203.0.113.77'))).ok).toBe(false);
    expect((await clearAddress(h, { client_ip: 'x'.repeat(64) })).status).toBe(204);
  });
});
