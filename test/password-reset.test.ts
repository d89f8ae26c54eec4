import { describe, expect, test } from 'bun:test';
import { sha256Hex } from '../src/security/digest';
import { createHarness, expectError, STRONG_PASSWORD, WEAK_PASSWORD, type Harness } from './support/harness';
import { rowOf as storedRow } from './support/rows';

const NEW_PASSWORD = 'a brand new passphrase 2';
const TEN_MINUTES = 10 * 60 * 1000;
const FIFTEEN_MINUTES = 15 * 60 * 1000;

type Created = { id: string; user_id: string; created_at: number; expires_at: number; code: string };

async function setup() {
  const h = createHarness();
  const user = await h.createUser({ email: 'ada@example.com' });
  return { h, user };
}

async function createRequest(h: Harness, userId: string, body: Record<string, unknown> = {}): Promise<Created> {
  const res = await h.call('POST', `/users/${userId}/password-reset-requests`, { body });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}

const verify = (h: Harness, id: string, code: unknown, extra: Record<string, unknown> = {}) =>
  h.call('POST', `/password-reset-requests/${id}/verify-email`, { body: { code, ...extra } });

const reset = (h: Harness, requestId: unknown, password: unknown = NEW_PASSWORD, extra: Record<string, unknown> = {}) =>
  h.call('POST', '/reset-password', { body: { request_id: requestId, password, ...extra } });

const verifyPassword = (h: Harness, userId: string, password: string) =>
  h.call('POST', `/users/${userId}/verify-password`, { body: { password } });

/** A well-formed code that differs from `code` in its first character. */
const wrongCode = (code: string): string => (code[0] === 'A' ? 'B' : 'A') + code.slice(1);

/** The stored request, or null once it is gone. */
const rowOf = async (h: Harness, id: string) => (await storedRow(h, 'passwordResetRequests', { id })) ?? null;

const expectRetryAfter = (res: { status: number; json: any; headers: Headers }, min = 1) => {
  expectError(res, 400, 'TOO_MANY_REQUESTS');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(min);
};

describe('password reset flow', () => {
  test('create, verify with a lower-case code, reset: password set, email verified, request used up', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    expect(Object.keys(created).sort()).toEqual(['code', 'created_at', 'expires_at', 'id', 'user_id']);
    expect(created.code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/);
    expect(created.id).toMatch(/^[abcdefghijkmnpqrstuvwxyz23456789]{24}$/);
    expect(created.user_id).toBe(user.id);
    expect(created.created_at).toBe(Math.floor(h.now() / 1000));
    expect(created.expires_at).toBe(created.created_at + 600);

    const view = { id: created.id, user_id: user.id, created_at: created.created_at, expires_at: created.expires_at };
    expect((await h.call('GET', `/password-reset-requests/${created.id}`)).json).toEqual(view);
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json).toEqual([view]);

    expect((await verify(h, created.id, created.code.toLowerCase())).status).toBe(204);
    expect((await verify(h, created.id, created.code)).status).toBe(204); // repeatable
    expect((await rowOf(h, created.id))?.emailVerified).toBe(true);
    expect((await h.call('GET', `/password-reset-requests/${created.id}`)).json).toEqual(view);

    expect((await reset(h, created.id)).status).toBe(204);
    expect((await h.call('GET', `/users/${user.id}`)).json.email_verified).toBe(true);
    expect((await verifyPassword(h, user.id, NEW_PASSWORD)).status).toBe(204);
    expectError(await verifyPassword(h, user.id, STRONG_PASSWORD), 400, 'INCORRECT_PASSWORD');

    expectError(await h.call('GET', `/password-reset-requests/${created.id}`), 404, 'NOT_FOUND');
    expectError(await verify(h, created.id, created.code), 404, 'NOT_FOUND');
    expectError(await reset(h, created.id, 'yet another passphrase'), 400, 'INVALID_REQUEST');
    expect((await verifyPassword(h, user.id, NEW_PASSWORD)).status).toBe(204);
  });

  test('an open (unverified) request resets too, and invalidates every request of that user only', async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    const first = await createRequest(h, user.id);
    const second = await createRequest(h, user.id);
    const third = await createRequest(h, user.id);
    const othersRequest = await createRequest(h, other.id);

    expect((await reset(h, second.id)).status).toBe(204);
    for (const request of [first, second, third]) {
      expectError(await h.call('GET', `/password-reset-requests/${request.id}`), 404, 'NOT_FOUND');
      expectError(await reset(h, request.id), 400, 'INVALID_REQUEST');
      expect(await rowOf(h, request.id)).toBeNull();
    }
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json).toEqual([]);
    expect((await h.call('GET', `/password-reset-requests/${othersRequest.id}`)).status).toBe(200);
    expect((await h.call('GET', `/users/${user.id}`)).json.email_verified).toBe(true);
    expect((await h.call('GET', `/users/${other.id}`)).json.email_verified).toBe(false);
  });

  test('the code is stored only as the SHA-256 of its upper-case form and never returned again', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    const row = (await rowOf(h, created.id))!;
    expect(row.codeHash).toBe(sha256Hex(created.code));
    for (const value of Object.values(row)) expect(String(value).toUpperCase()).not.toContain(created.code);

    const single = await h.call('GET', `/password-reset-requests/${created.id}`);
    const list = await h.call('GET', `/users/${user.id}/password-reset-requests`);
    for (const res of [single, list]) {
      expect(res.text).not.toContain(created.code);
      expect(res.text).not.toContain('code');
    }
  });

  test('expires exactly 10 minutes after creation', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    h.advance(TEN_MINUTES - 1000);
    expect((await h.call('GET', `/password-reset-requests/${created.id}`)).status).toBe(200);
    h.advance(1000);
    expectError(await h.call('GET', `/password-reset-requests/${created.id}`), 404, 'NOT_FOUND');
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json).toEqual([]);
    expectError(await verify(h, created.id, created.code), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/password-reset-requests/${created.id}`), 404, 'NOT_FOUND');
    expectError(await reset(h, created.id), 400, 'INVALID_REQUEST');
    expect((await verifyPassword(h, user.id, STRONG_PASSWORD)).status).toBe(204);
  });
});

describe('POST /users/{id}/password-reset-requests', () => {
  test('404 for an unknown user comes before a bad body', async () => {
    const { h } = await setup();
    expectError(await h.call('POST', '/users/nosuchuser/password-reset-requests', { body: {} }), 404, 'NOT_FOUND');
    expectError(await h.call('POST', '/users/nosuchuser/password-reset-requests', { rawBody: 'not json' }), 404, 'NOT_FOUND');
  });

  test('INVALID_DATA for a non-JSON body or a bad client_ip; an empty body is fine', async () => {
    const { h, user } = await setup();
    const path = `/users/${user.id}/password-reset-requests`;
    expectError(await h.call('POST', path, { rawBody: 'not json' }), 400, 'INVALID_DATA');
    for (const rawBody of ['[]', 'null', '5', '"text"']) expectError(await h.call('POST', path, { rawBody }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', path, { body: { client_ip: 'x'.repeat(65) } }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', path, { body: { client_ip: 42 } }), 400, 'INVALID_DATA');
    expect((await h.call('POST', path, { rawBody: '' })).status).toBe(200);
    expect((await h.call('POST', path, { body: { client_ip: null } })).status).toBe(200);
    expect((await h.call('POST', path)).status).toBe(200); // no body at all
    // Those three used up the user's limit; refused bodies did not count toward it.
    expectRetryAfter(await h.call('POST', path, { body: {} }));
  });

  test('at most 3 per user in any 15 minutes, with Retry-After; allowed again after the window', async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    for (let i = 0; i < 3; i++) await createRequest(h, user.id);
    const refused = await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} });
    expectRetryAfter(refused);
    expect(Number(refused.headers.get('retry-after'))).toBe(900);
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json.length).toBe(3);
    await createRequest(h, other.id); // another user has a limit of its own

    h.advance(FIFTEEN_MINUTES - 1000);
    expectRetryAfter(await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} }));
    h.advance(1000);
    await createRequest(h, user.id);
  });

  test('client_ip spends a token of that address (5 per address), with Retry-After', async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    for (let i = 0; i < 3; i++) await createRequest(h, user.id, { client_ip: '203.0.113.7' });
    for (let i = 0; i < 2; i++) await createRequest(h, other.id, { client_ip: '203.0.113.7' });
    expectRetryAfter(await h.call('POST', `/users/${other.id}/password-reset-requests`, { body: { client_ip: '203.0.113.7' } }));
    // The refusal by address did not count toward the user's limit, and other addresses are unaffected.
    await createRequest(h, other.id, { client_ip: '198.51.100.1' });
  });
});

describe('listing and deleting requests', () => {
  test('GET lists live requests oldest first, ties broken by id; 404 for an unknown user', async () => {
    const { h, user } = await setup();
    const a = await createRequest(h, user.id);
    const b = await createRequest(h, user.id);
    h.advance(5000);
    const c = await createRequest(h, user.id);
    const list = (await h.call('GET', `/users/${user.id}/password-reset-requests`)).json as { id: string }[];
    const sameSecond = [a.id, b.id].sort();
    expect(list.map((r) => r.id)).toEqual([...sameSecond, c.id]);
    expectError(await h.call('GET', '/users/nosuchuser/password-reset-requests'), 404, 'NOT_FOUND');
  });

  test("DELETE /users/{id}/password-reset-requests invalidates all of the user's requests", async () => {
    const { h, user } = await setup();
    const other = await h.createUser();
    const mine = [await createRequest(h, user.id), await createRequest(h, user.id)];
    const theirs = await createRequest(h, other.id);
    expect((await h.call('DELETE', `/users/${user.id}/password-reset-requests`)).status).toBe(204);
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json).toEqual([]);
    for (const request of mine) {
      expectError(await h.call('GET', `/password-reset-requests/${request.id}`), 404, 'NOT_FOUND');
      expectError(await verify(h, request.id, request.code), 404, 'NOT_FOUND');
      expectError(await reset(h, request.id), 400, 'INVALID_REQUEST');
    }
    expect((await h.call('GET', `/password-reset-requests/${theirs.id}`)).status).toBe(200);
    expect((await h.call('DELETE', `/users/${user.id}/password-reset-requests`)).status).toBe(204);
    expectError(await h.call('DELETE', '/users/nosuchuser/password-reset-requests'), 404, 'NOT_FOUND');
  });

  test('GET and DELETE /password-reset-requests/{id}: 404 when missing; a deleted request is gone', async () => {
    const { h, user } = await setup();
    const kept = await createRequest(h, user.id);
    const deleted = await createRequest(h, user.id);
    expectError(await h.call('GET', '/password-reset-requests/nosuchrequest'), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', '/password-reset-requests/nosuchrequest'), 404, 'NOT_FOUND');
    expect((await h.call('DELETE', `/password-reset-requests/${deleted.id}`)).status).toBe(204);
    expectError(await h.call('GET', `/password-reset-requests/${deleted.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/password-reset-requests/${deleted.id}`), 404, 'NOT_FOUND');
    expectError(await verify(h, deleted.id, deleted.code), 404, 'NOT_FOUND');
    expectError(await reset(h, deleted.id), 400, 'INVALID_REQUEST');
    expect((await h.call('GET', `/users/${user.id}/password-reset-requests`)).json.map((r: { id: string }) => r.id)).toEqual([kept.id]);
  });
});

describe('POST /password-reset-requests/{id}/verify-email', () => {
  test('404 for an unknown request comes before a bad body', async () => {
    const { h } = await setup();
    expectError(await verify(h, 'nosuchrequest', 'ABCDEFGH'), 404, 'NOT_FOUND');
    expectError(await h.call('POST', '/password-reset-requests/nosuchrequest/verify-email', { rawBody: 'not json' }), 404, 'NOT_FOUND');
  });

  test('INVALID_DATA for a malformed code or body, and no attempt is counted', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    const path = `/password-reset-requests/${created.id}/verify-email`;
    for (const code of [undefined, 'ABCDEFG', 'ABCDEFGHJ', 'ABCDEFG0', 'ABCDEFGI', 'ABCDEFG1', 'ABCD EFG', 12345678, null]) {
      expectError(await verify(h, created.id, code), 400, 'INVALID_DATA');
    }
    expectError(await h.call('POST', path, { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', path, { rawBody: '' }), 400, 'INVALID_DATA');
    expectError(await verify(h, created.id, created.code, { client_ip: 'x'.repeat(65) }), 400, 'INVALID_DATA');
    expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: 0, emailVerified: false });
  });

  test('a wrong code is INCORRECT_CODE; the 5th invalidates the request (then 404 / INVALID_REQUEST)', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    for (let i = 1; i <= 4; i++) {
      expectError(await verify(h, created.id, wrongCode(created.code)), 400, 'INCORRECT_CODE');
      expect((await rowOf(h, created.id))?.failedAttempts).toBe(i);
    }
    expectError(await verify(h, created.id, wrongCode(created.code).toLowerCase()), 400, 'INCORRECT_CODE');
    expect(await rowOf(h, created.id)).toBeNull();
    expectError(await verify(h, created.id, created.code), 404, 'NOT_FOUND');
    expectError(await h.call('GET', `/password-reset-requests/${created.id}`), 404, 'NOT_FOUND');
    expectError(await reset(h, created.id), 400, 'INVALID_REQUEST');
    expect((await verifyPassword(h, user.id, STRONG_PASSWORD)).status).toBe(204);
  });

  test('wrong codes still count after the request was verified', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    expect((await verify(h, created.id, created.code)).status).toBe(204);
    for (let i = 0; i < 4; i++) expectError(await verify(h, created.id, wrongCode(created.code)), 400, 'INCORRECT_CODE');
    expect((await verify(h, created.id, created.code)).status).toBe(204); // a success does not clear the count
    expectError(await verify(h, created.id, wrongCode(created.code)), 400, 'INCORRECT_CODE');
    expectError(await verify(h, created.id, created.code), 404, 'NOT_FOUND');
    expectError(await reset(h, created.id), 400, 'INVALID_REQUEST');
  });

  test('client_ip spends a token of that address; a refused call counts no attempt', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    for (let i = 0; i < 5; i++) expect((await verify(h, created.id, created.code, { client_ip: '203.0.113.7' })).status).toBe(204);
    expectRetryAfter(await verify(h, created.id, wrongCode(created.code), { client_ip: '203.0.113.7' }));
    expect((await rowOf(h, created.id))?.failedAttempts).toBe(0);
    expect((await verify(h, created.id, created.code)).status).toBe(204);
  });
});

describe('POST /reset-password', () => {
  test('INVALID_DATA for a bad body, before INVALID_REQUEST', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    for (const id of [created.id, 'nosuchrequest']) {
      expectError(await reset(h, id, 'short'), 400, 'INVALID_DATA');
      expectError(await reset(h, id, 'p'.repeat(128)), 400, 'INVALID_DATA');
      expectError(await reset(h, id, 12345678), 400, 'INVALID_DATA');
      expectError(await h.call('POST', '/reset-password', { body: { request_id: id } }), 400, 'INVALID_DATA');
      expectError(await reset(h, id, NEW_PASSWORD, { client_ip: 'x'.repeat(65) }), 400, 'INVALID_DATA');
    }
    expectError(await h.call('POST', '/reset-password', { body: { password: NEW_PASSWORD } }), 400, 'INVALID_DATA');
    expectError(await reset(h, 42), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/reset-password', { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/reset-password', { rawBody: '' }), 400, 'INVALID_DATA');
    expect((await reset(h, created.id)).status).toBe(204); // none of that touched the request
  });

  test('INVALID_REQUEST for an unknown request comes before the rate limit and the strength check', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    for (let i = 0; i < 5; i++) expectError(await reset(h, created.id, WEAK_PASSWORD, { client_ip: '203.0.113.7' }), 400, 'WEAK_PASSWORD');
    expectRetryAfter(await reset(h, created.id, NEW_PASSWORD, { client_ip: '203.0.113.7' }));
    expectError(await reset(h, 'nosuchrequest', WEAK_PASSWORD, { client_ip: '203.0.113.7' }), 400, 'INVALID_REQUEST');
    expectError(await reset(h, '', NEW_PASSWORD), 400, 'INVALID_REQUEST');
  });

  test('WEAK_PASSWORD leaves the request and the password as they were', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    expectError(await reset(h, created.id, WEAK_PASSWORD), 400, 'WEAK_PASSWORD');
    expect((await h.call('GET', `/password-reset-requests/${created.id}`)).status).toBe(200);
    expect((await h.call('GET', `/users/${user.id}`)).json.email_verified).toBe(false);
    expect((await verifyPassword(h, user.id, STRONG_PASSWORD)).status).toBe(204);
    expect((await reset(h, created.id)).status).toBe(204);
  });
});

describe('concurrency', () => {
  test('10 parallel deletes of one request: exactly one 204, the rest 404', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    const answers = await Promise.all(Array.from({ length: 10 }, () => h.call('DELETE', `/password-reset-requests/${created.id}`)));
    expect(answers.filter((res) => res.status === 204).length).toBe(1);
    for (const res of answers) if (res.status !== 204) expectError(res, 404, 'NOT_FOUND');
  });

  test("9 parallel resets on three of one user's requests: exactly one 204, the rest INVALID_REQUEST", async () => {
    const { h, user } = await setup();
    const requests = [await createRequest(h, user.id), await createRequest(h, user.id), await createRequest(h, user.id)];
    const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => reset(h, requests[i % 3]!.id, `parallel passphrase ${i}`)));
    expect(answers.filter((res) => res.status === 204).length).toBe(1);
    for (const res of answers) if (res.status !== 204) expectError(res, 400, 'INVALID_REQUEST');
  });

  test('20 parallel wrong codes: exactly 5 INCORRECT_CODE, the rest NOT_FOUND', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(h, created.id, wrongCode(created.code))));
    const errors = answers.map((res) => res.json?.error);
    expect(errors.filter((e) => e === 'INCORRECT_CODE').length).toBe(5);
    expect(errors.filter((e) => e === 'NOT_FOUND').length).toBe(15);
    expect(await rowOf(h, created.id)).toBeNull();
    expectError(await reset(h, created.id), 400, 'INVALID_REQUEST');
  });

  test('parallel wrong codes after 3 counted ones get only the 2 attempts left', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    for (let i = 0; i < 3; i++) await verify(h, created.id, wrongCode(created.code));
    const answers = await Promise.all(Array.from({ length: 10 }, () => verify(h, created.id, wrongCode(created.code))));
    expect(answers.filter((res) => res.json?.error === 'INCORRECT_CODE').length).toBe(2);
    expect(await rowOf(h, created.id)).toBeNull();
  });

  test('10 parallel resets of one request: exactly one 204, and its password is the one set', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h, user.id);
    const passwords = Array.from({ length: 10 }, (_, i) => `parallel passphrase ${i}`);
    const answers = await Promise.all(passwords.map((password) => reset(h, created.id, password)));
    expect(answers.filter((res) => res.status === 204).length).toBe(1);
    for (const res of answers) if (res.status !== 204) expectError(res, 400, 'INVALID_REQUEST');
    const winner = passwords[answers.findIndex((res) => res.status === 204)]!;
    expect((await verifyPassword(h, user.id, winner)).status).toBe(204);
    const loser = passwords.find((p) => p !== winner)!;
    expectError(await verifyPassword(h, user.id, loser), 400, 'INCORRECT_PASSWORD');
    expectError(await reset(h, created.id, 'one more passphrase'), 400, 'INVALID_REQUEST');
  });
});
