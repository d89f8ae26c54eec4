import { describe, expect, test } from 'bun:test';
import { createHarness, expectError, type Harness } from './support/harness';
import { rowOf, rowsOf } from './support/rows';

const MINUTE = 60_000;
const CODE_FORMAT = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/;

/** A well-formed code that is not `code`. */
const wrongCodeFor = (code: string): string => (code[0] === 'A' ? 'B' : 'A') + code.slice(1);

async function setup(email: string | null = 'ada@example.com') {
  const h = createHarness();
  const user = await h.createUser({ email });
  return { h, user, path: `/users/${user.id}` };
}

async function requestVerification(h: Harness, path: string) {
  const res = await h.call('POST', `${path}/email-verification-request`);
  expect(res.status).toBe(200);
  return res.json as { user_id: string; created_at: number; expires_at: number; code: string };
}

const verify = (h: Harness, path: string, code: unknown) => h.call('POST', `${path}/verify-email`, { body: { code } });

async function expectWrongCodes(h: Harness, path: string, code: string, times: number) {
  for (let i = 0; i < times; i++) expectError(await verify(h, path, wrongCodeFor(code)), 400, 'INCORRECT_CODE');
}

describe('email verification', () => {
  test('create, read, then verify with a lower-case code', async () => {
    const { h, user, path } = await setup();
    const created = await requestVerification(h, path);
    const nowSeconds = Math.floor(h.now() / 1000);
    expect(created).toEqual({ user_id: user.id, created_at: nowSeconds, expires_at: nowSeconds + 600, code: expect.any(String) });
    expect(created.code).toMatch(CODE_FORMAT);
    expect((await h.call('GET', `${path}/email-verification-request`)).json).toEqual(created);

    const res = await verify(h, path, created.code.toLowerCase());
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await h.call('GET', path)).json.email_verified).toBe(true);
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await verify(h, path, created.code), 400, 'NOT_ALLOWED');
  });

  test('a request may be created for a user without an email and for one already verified; a body is ignored', async () => {
    const { h, path } = await setup(null);
    const first = await requestVerification(h, path);
    expect((await verify(h, path, first.code)).status).toBe(204);
    const again = await h.call('POST', `${path}/email-verification-request`, { rawBody: 'not json' });
    expect(again.status).toBe(200);
    expect(again.json.code).toMatch(CODE_FORMAT);
  });

  test('unknown user is 404 on every endpoint, before the body is looked at', async () => {
    const { h } = await setup();
    const path = '/users/unknownuserunknownuser23';
    expectError(await h.call('POST', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await verify(h, path, 'AAAAAAAA'), 404, 'NOT_FOUND');
    expectError(await h.call('POST', `${path}/verify-email`, { rawBody: 'not json' }), 404, 'NOT_FOUND');
  });

  test('GET and DELETE answer 404 when nothing is pending; DELETE removes the pending request', async () => {
    const { h, path } = await setup();
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    const { code } = await requestVerification(h, path);
    expect((await h.call('DELETE', `${path}/email-verification-request`)).status).toBe(204);
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await verify(h, path, code), 400, 'NOT_ALLOWED');
  });

  test('malformed bodies and codes are INVALID_DATA and count no attempt', async () => {
    const { h, path } = await setup();
    const { code } = await requestVerification(h, path);
    const malformed = [{}, { code: 12345678 }, { code: null }, { code: 'ABCDEFG' }, { code: 'ABCDEFGHJ' }, { code: 'ABCDEFG0' },
      { code: 'ABCDEFGO' }, { code: 'ABCDEFGI' }, { code: 'ABCDEFG1' }, { code: ' ABCDEFG' }];
    for (const body of malformed) expectError(await h.call('POST', `${path}/verify-email`, { body }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', `${path}/verify-email`, { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', `${path}/verify-email`, { rawBody: '["x"]' }), 400, 'INVALID_DATA');
    // Also before NOT_ALLOWED: a user with nothing pending still gets INVALID_DATA for a bad code.
    const other = await h.createUser();
    expectError(await verify(h, `/users/${other.id}`, 'short'), 400, 'INVALID_DATA');

    const row = await rowOf(h, 'emailVerificationRequests', { userId: path.slice(7) });
    expect(row?.failedAttempts).toBe(0);
    expect((await verify(h, path, code)).status).toBe(204);
  });

  test('a request expires after 10 minutes', async () => {
    const { h, path } = await setup();
    const { code } = await requestVerification(h, path);
    h.advance(10 * MINUTE - 1000);
    expect((await h.call('GET', `${path}/email-verification-request`)).status).toBe(200);
    h.advance(1000);
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await verify(h, path, code), 400, 'NOT_ALLOWED');
    expect((await h.call('GET', path)).json.email_verified).toBe(false);
  });

  test('a new request replaces the pending one: new code, new expiry, fresh attempt count', async () => {
    const { h, user, path } = await setup();
    const old = await requestVerification(h, path);
    await expectWrongCodes(h, path, old.code, 2);
    h.advance(3 * MINUTE);
    const fresh = await requestVerification(h, path);
    expect(fresh.code).not.toBe(old.code);
    expect(fresh.created_at).toBe(old.created_at + 180);
    expect(fresh.expires_at).toBe(old.expires_at + 180);
    const row = await rowOf(h, 'emailVerificationRequests', { userId: user.id });
    expect(row?.failedAttempts).toBe(0);

    expectError(await verify(h, path, old.code), 400, 'INCORRECT_CODE');
    // 11 minutes after the first request: past its expiry, within the replacement's.
    h.advance(8 * MINUTE);
    expect((await verify(h, path, fresh.code)).status).toBe(204);
  });

  test('the 5th wrong code deletes the request', async () => {
    const { h, path } = await setup();
    const { code } = await requestVerification(h, path);
    await expectWrongCodes(h, path, code, 4);
    expect((await h.call('GET', `${path}/email-verification-request`)).status).toBe(200);
    await expectWrongCodes(h, path, code, 1);
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
    expectError(await verify(h, path, code), 400, 'NOT_ALLOWED');
  });

  test('the 4th creation within 15 minutes is TOO_MANY_REQUESTS with Retry-After', async () => {
    const { h, path } = await setup();
    let latest = await requestVerification(h, path);
    for (let i = 0; i < 2; i++) {
      h.advance(MINUTE);
      latest = await requestVerification(h, path);
    }
    h.advance(MINUTE);
    const refused = await h.call('POST', `${path}/email-verification-request`);
    expectError(refused, 400, 'TOO_MANY_REQUESTS');
    expect(refused.headers.get('retry-after')).toBe(String(15 * 60 - 3 * 60));
    // A refused creation leaves the pending request alone.
    expect((await h.call('GET', `${path}/email-verification-request`)).json).toEqual(latest);
    h.advance(12 * MINUTE);
    await requestVerification(h, path);
  });

  test('5 wrong codes within 15 minutes lock verify-email for 15 minutes; new requests may still be created', async () => {
    const { h, path } = await setup();
    const first = await requestVerification(h, path);
    await expectWrongCodes(h, path, first.code, 4);
    const second = await requestVerification(h, path); // fresh request counter, same user lockout
    await expectWrongCodes(h, path, second.code, 1);

    const locked = await verify(h, path, second.code);
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(locked.headers.get('retry-after')).toBe('900');
    expectError(await verify(h, path, wrongCodeFor(second.code)), 400, 'TOO_MANY_REQUESTS');
    expect((await h.call('GET', `${path}/email-verification-request`)).status).toBe(200);

    h.advance(10 * MINUTE);
    const third = await requestVerification(h, path);
    const stillLocked = await verify(h, path, third.code);
    expectError(stillLocked, 400, 'TOO_MANY_REQUESTS');
    expect(stillLocked.headers.get('retry-after')).toBe('300');
    h.advance(5 * MINUTE - 1000);
    expect((await verify(h, path, third.code)).headers.get('retry-after')).toBe('1');
    h.advance(1000);
    expect((await verify(h, path, third.code)).status).toBe(204);
    expect((await h.call('GET', path)).json.email_verified).toBe(true);
  });

  test('a successful verification clears the wrong-code count', async () => {
    const { h, path } = await setup();
    const first = await requestVerification(h, path);
    await expectWrongCodes(h, path, first.code, 4);
    expect((await verify(h, path, first.code)).status).toBe(204);
    const second = await requestVerification(h, path);
    // Without the clear, the first of these would be the user's 5th failure and lock the user.
    await expectWrongCodes(h, path, second.code, 4);
    expect((await verify(h, path, second.code)).status).toBe(204);
  });

  test('20 parallel wrong codes count exactly 5', async () => {
    const { h, path } = await setup();
    const { code } = await requestVerification(h, path);
    const results = await Promise.all(Array.from({ length: 20 }, () => verify(h, path, wrongCodeFor(code))));
    const errors = results.map((r) => r.json.error);
    expect(errors.filter((e) => e === 'INCORRECT_CODE')).toHaveLength(5);
    expect(errors.filter((e) => e === 'NOT_ALLOWED')).toHaveLength(15);
    expectError(await h.call('GET', `${path}/email-verification-request`), 404, 'NOT_FOUND');
  });

  test('parallel correct codes succeed exactly once', async () => {
    const { h, path } = await setup();
    const { code } = await requestVerification(h, path);
    const results = await Promise.all(Array.from({ length: 10 }, () => verify(h, path, code)));
    expect(results.filter((r) => r.status === 204)).toHaveLength(1);
    expect(results.filter((r) => r.json?.error === 'NOT_ALLOWED')).toHaveLength(9);
  });

  test('deleting the user deletes its pending request', async () => {
    const { h, user, path } = await setup();
    await requestVerification(h, path);
    expect((await h.call('DELETE', path)).status).toBe(204);
    expect(await rowsOf(h, 'emailVerificationRequests', { userId: user.id })).toEqual([]);
  });
});
