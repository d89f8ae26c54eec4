import { describe, expect, test } from 'bun:test';
import { sweepExpired } from '../src/code-requests/service';
import { sha256Hex } from '../src/security/digest';
import { allowEvents, eventsDuring, refuseEvents, summary } from './support/events';
import { createHarness, expectError, STRONG_PASSWORD, type Harness } from './support/harness';
import { parseSamples, sumOf } from './support/prom-text';
import { rowOf as storedRow, rowsOf, updateRows } from './support/rows';

/** Sign in with an emailed code (API.md §15), on every set-up: SQLite, PostgreSQL + Redis with one and two instances. */

const IP = '203.0.113.7';
const TEN_SECONDS = 10_000;
const TEN_MINUTES = 10 * 60 * 1000;
const FIFTEEN_MINUTES = 15 * 60 * 1000;

type Created = { id: string; user_id: string; created_at: number; expires_at: number; email: string; code: string };

async function setup() {
  const h = createHarness();
  const user = await h.createUser({ email: 'ada@example.com' });
  return { h, user };
}

const createRaw = (h: Harness, body: Record<string, unknown>) => h.call('POST', '/email-sign-in-requests', { body });

async function createRequest(h: Harness, email = 'ada@example.com', extra: Record<string, unknown> = {}): Promise<Created> {
  const res = await createRaw(h, { email, ...extra });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}

const signIn = (h: Harness, requestId: unknown, code: unknown, extra: Record<string, unknown> = {}) =>
  h.call('POST', '/authenticate/email-code', { body: { request_id: requestId, code, ...extra } });

const list = async (h: Harness, userId: string) => (await h.call('GET', `/users/${userId}/email-sign-in-requests`)).json;

/** A well-formed code that differs from `code` in its first character. */
const wrongCode = (code: string): string => (code[0] === 'A' ? 'B' : 'A') + code.slice(1);

/** The stored request, or null once it is gone. */
const rowOf = async (h: Harness, id: string) => (await storedRow(h, 'emailSignInRequests', { id })) ?? null;

const expectRetryAfter = (res: { status: number; json: any; headers: Headers }, min = 1) => {
  expectError(res, 400, 'TOO_MANY_REQUESTS');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(min);
};

/** Five wrong passwords from `ip`, ten seconds apart so the address's tokens never run out first: the address is blocked. */
async function blockAddress(h: Harness, userId: string, ip: string) {
  for (let i = 0; i < 5; i++) {
    h.advance(TEN_SECONDS);
    expectError(await h.call('POST', `/users/${userId}/verify-password`, { body: { password: 'not the password', client_ip: ip } }), 400, 'INCORRECT_PASSWORD');
  }
  h.advance(TEN_SECONDS);
}

describe('sign in with an emailed code', () => {
  test('create, then sign in with the lower-case code: the user, its email verified, the request used up', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    expect(Object.keys(created).sort()).toEqual(['code', 'created_at', 'email', 'expires_at', 'id', 'user_id']);
    expect(created.email).toBe('ada@example.com');
    expect(created.code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/);
    expect(created.id).toMatch(/^[abcdefghijkmnpqrstuvwxyz23456789]{24}$/);
    expect(created.user_id).toBe(user.id);
    expect(created.created_at).toBe(Math.floor(h.now() / 1000));
    expect(created.expires_at).toBe(created.created_at + 600);
    const { code, email: _, ...view } = created;
    expect(await list(h, user.id)).toEqual([view]);

    const res = await signIn(h, created.id, code.toLowerCase());
    expect(res.status).toBe(200);
    expect(res.json).toEqual((await h.call('GET', `/users/${user.id}`)).json);
    expect(res.json).toMatchObject({ id: user.id, email: 'ada@example.com', email_verified: true });
    expect(await rowOf(h, created.id)).toBeNull();
    expect(await list(h, user.id)).toEqual([]);
    expectError(await signIn(h, created.id, code), 400, 'INVALID_REQUEST');
    // The address's first proof: the password nobody proved is gone (API.md §15, test/first-proof.test.ts).
    expectError(await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD } }), 400, 'INCORRECT_PASSWORD');
  });

  test('the code is stored only as the SHA-256 of its upper-case form and never returned again', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    const row = (await rowOf(h, created.id))!;
    expect(row.codeHash).toBe(sha256Hex(created.code));
    for (const value of Object.values(row)) expect(String(value).toUpperCase()).not.toContain(created.code);
    const listed = await h.call('GET', `/users/${user.id}/email-sign-in-requests`);
    expect(listed.text).not.toContain(created.code);
    expect(listed.text).not.toContain('code');
  });

  test('expires exactly 10 minutes after creation', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    h.advance(TEN_MINUTES - 1000);
    expect((await list(h, user.id)).length).toBe(1);
    h.advance(1000);
    expect(await list(h, user.id)).toEqual([]);
    expectError(await signIn(h, created.id, created.code), 400, 'INVALID_REQUEST');
  });

  test('events: email_code.used on success, email_code.incorrect for a wrong code, both with client_ip', async () => {
    const { h, user } = await setup();
    const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
    const created = await createRequest(h, 'ada@example.com', { client_ip: IP });
    expect(await during(() => signIn(h, created.id, wrongCode(created.code), { client_ip: IP }))).toEqual([['email_code.incorrect', user.id, IP]]);
    expect(await during(() => signIn(h, created.id, created.code))).toEqual([['email_code.used', user.id, null], ['credentials.revoked', user.id, null]]);
    // Creating one, and refusals before the code is judged, write nothing.
    expect(await during(() => createRequest(h))).toEqual([]);
    expect(await during(() => createRaw(h, { email: 'nobody@example.com' }))).toEqual([]);
    expect(await during(() => signIn(h, created.id, created.code))).toEqual([]);
  });

  test('a change and its event commit together: with events refused, nothing is consumed or counted', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    await refuseEvents(h);
    expect((await signIn(h, created.id, wrongCode(created.code))).status).toBe(500);
    expect((await signIn(h, created.id, created.code)).status).toBe(500);
    expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: 0 });
    expect((await h.call('GET', `/users/${user.id}`)).json.email_verified).toBe(false);
    await allowEvents(h);
    expect((await signIn(h, created.id, created.code)).status).toBe(200);
  });
});

describe('POST /email-sign-in-requests', () => {
  test('INVALID_DATA for a bad body, before the address token; nothing is stored', async () => {
    const { h, user } = await setup();
    const bad = [{}, { email: null }, { email: 42 }, { email: 'no-at-sign' }, { email: ' ada@example.com' }, { email: 'ada@example.com', client_ip: 'x'.repeat(65) }];
    for (const body of bad) expectError(await createRaw(h, { ...body, client_ip: (body as { client_ip?: string }).client_ip ?? IP }), 400, 'INVALID_DATA');
    for (const rawBody of ['not json', '[]', 'null', '""', '']) expectError(await h.call('POST', '/email-sign-in-requests', { rawBody }), 400, 'INVALID_DATA');
    expect(await list(h, user.id)).toEqual([]);
    // None of those spent a token of IP.
    for (let i = 0; i < 3; i++) await createRequest(h, 'ada@example.com', { client_ip: IP });
  });

  test('an unknown address is NOT_FOUND after spending the token; the address is compared normalised', async () => {
    const { h, user } = await setup();
    for (let i = 0; i < 3; i++) expectError(await createRaw(h, { email: 'nobody@example.com', client_ip: IP }), 404, 'NOT_FOUND');
    expect((await createRequest(h, 'ADA@Example.COM', { client_ip: IP })).user_id).toBe(user.id);
    expect((await createRequest(h, 'ada@example.com', { client_ip: IP })).user_id).toBe(user.id);
    // The bucket (5) is empty now: the token is checked first, for known and unknown addresses alike.
    expectRetryAfter(await createRaw(h, { email: 'nobody@example.com', client_ip: IP }));
    expectRetryAfter(await createRaw(h, { email: 'ada@example.com', client_ip: IP }));
    expect((await list(h, user.id)).length).toBe(2);
  });

  test('at most 3 per user in any 15 minutes, with Retry-After; other users and addresses unaffected', async () => {
    const { h, user } = await setup();
    await h.createUser({ email: 'bob@example.com' });
    for (let i = 0; i < 3; i++) await createRequest(h);
    const refused = await createRaw(h, { email: 'ada@example.com' });
    expectRetryAfter(refused);
    expect(Number(refused.headers.get('retry-after'))).toBe(900);
    expect((await list(h, user.id)).length).toBe(3);
    await createRequest(h, 'bob@example.com');
    h.advance(FIFTEEN_MINUTES - 1000);
    expectRetryAfter(await createRaw(h, { email: 'ada@example.com' }));
    h.advance(1000);
    await createRequest(h);
    // Its refusals are counted under their own label (metrics are per process: summed over the instances).
    const samples = (await h.callEach('GET', '/metrics')).flatMap(parseSamples);
    expect(sumOf(samples, 'gatehouse_rate_limit_refusals_total', { limit: 'email_sign_in_requests' })).toBe(2);
  });

  test("a refusal by the address's tokens does not count toward the user's limit", async () => {
    const { h } = await setup();
    for (let i = 0; i < 5; i++) await createRaw(h, { email: 'nobody@example.com', client_ip: IP });
    expectRetryAfter(await createRaw(h, { email: 'ada@example.com', client_ip: IP }));
    for (let i = 0; i < 3; i++) await createRequest(h);
  });
});

describe('POST /authenticate/email-code', () => {
  test('INVALID_DATA for a bad body, before INVALID_REQUEST; no attempt is counted', async () => {
    const { h } = await setup();
    const created = await createRequest(h);
    for (const id of [created.id, 'nosuchrequest']) {
      for (const code of [undefined, null, 12345678, 'ABCDEFG', 'ABCDEFGHJ', 'ABCDEFG0', 'ABCDEFGI', 'ABCD EFG']) expectError(await signIn(h, id, code), 400, 'INVALID_DATA');
      expectError(await signIn(h, id, created.code, { client_ip: 'x'.repeat(65) }), 400, 'INVALID_DATA');
    }
    expectError(await signIn(h, undefined, created.code), 400, 'INVALID_DATA');
    expectError(await signIn(h, 42, created.code), 400, 'INVALID_DATA');
    for (const rawBody of ['not json', '', '[]']) expectError(await h.call('POST', '/authenticate/email-code', { rawBody }), 400, 'INVALID_DATA');
    expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: 0 });
    expect((await signIn(h, created.id, created.code)).status).toBe(200);
  });

  test('INVALID_REQUEST for an unknown request comes before the tokens and the login block', async () => {
    const { h, user } = await setup();
    await blockAddress(h, user.id, IP);
    expectError(await signIn(h, 'nosuchrequest', 'ABCDEFGH', { client_ip: IP }), 400, 'INVALID_REQUEST');
    expectError(await signIn(h, '', 'ABCDEFGH', { client_ip: IP }), 400, 'INVALID_REQUEST');
    const created = await createRequest(h);
    // The right code from a blocked address: refused, and the request stays as it was.
    expectRetryAfter(await signIn(h, created.id, created.code, { client_ip: IP }), 60);
    expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: 0 });
    expect((await signIn(h, created.id, created.code, { client_ip: '198.51.100.1' })).status).toBe(200);
  });

  test('client_ip spends a token; a refused call counts no attempt', async () => {
    const { h } = await setup();
    const requests = [await createRequest(h), await createRequest(h), await createRequest(h)];
    for (let i = 0; i < 4; i++) expectError(await signIn(h, 'nosuchrequest', 'ABCDEFGH', { client_ip: IP }), 400, 'INVALID_REQUEST');
    for (let i = 0; i < 4; i++) expectError(await signIn(h, requests[0]!.id, wrongCode(requests[0]!.code), { client_ip: IP }), 400, 'INCORRECT_CODE');
    expect(await rowOf(h, requests[0]!.id)).toMatchObject({ failedAttempts: 4 });
    expect((await signIn(h, requests[1]!.id, requests[1]!.code, { client_ip: IP })).status).toBe(200);
    expectRetryAfter(await signIn(h, requests[2]!.id, wrongCode(requests[2]!.code), { client_ip: IP }));
    expect(await rowOf(h, requests[2]!.id)).toMatchObject({ failedAttempts: 0 });
  });

  test('a wrong code is INCORRECT_CODE, counted on the request; the 5th invalidates it', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    const other = await createRequest(h);
    for (let i = 1; i <= 4; i++) {
      expectError(await signIn(h, created.id, wrongCode(created.code)), 400, 'INCORRECT_CODE');
      expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: i });
    }
    expectError(await signIn(h, created.id, wrongCode(created.code).toLowerCase()), 400, 'INCORRECT_CODE');
    expect(await rowOf(h, created.id)).toBeNull();
    expectError(await signIn(h, created.id, created.code), 400, 'INVALID_REQUEST');
    expect((await list(h, user.id)).map((r: { id: string }) => r.id)).toEqual([other.id]);
    expect((await h.call('GET', `/users/${user.id}`)).json.email_verified).toBe(false);
    // Another request of the same user counts its own codes.
    expect(await rowOf(h, other.id)).toMatchObject({ failedAttempts: 0 });
    expect((await signIn(h, other.id, other.code)).status).toBe(200);
  });

  test("wrong codes count toward the address's login block like wrong passwords", async () => {
    const { h, user } = await setup();
    const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
    const requests = [await createRequest(h), await createRequest(h)];
    const wrong = (i: number) => {
      h.advance(TEN_SECONDS);
      return signIn(h, requests[i]!.id, wrongCode(requests[i]!.code), { client_ip: IP });
    };
    // Three wrong passwords and two wrong codes (on two requests) from one address: the fifth failure blocks it.
    for (let i = 0; i < 3; i++) {
      h.advance(TEN_SECONDS);
      expectError(await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'not the password', client_ip: IP } }), 400, 'INCORRECT_PASSWORD');
    }
    expect(await during(async () => expectError(await wrong(0), 400, 'INCORRECT_CODE'))).toEqual([['email_code.incorrect', user.id, IP]]);
    expect(await during(async () => expectError(await wrong(1), 400, 'INCORRECT_CODE'))).toEqual([
      ['email_code.incorrect', user.id, IP],
      ['address.blocked', user.id, IP],
    ]);
    h.advance(TEN_SECONDS);
    const blocked = await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD, client_ip: IP } });
    expectRetryAfter(blocked, 15 * 60 - 60);
    expectRetryAfter(await signIn(h, requests[0]!.id, requests[0]!.code, { client_ip: IP }));
    // The block ends 15 minutes after the failure that started it; a success does not clear it, and the requests lived 10.
    h.advance(FIFTEEN_MINUTES);
    const fresh = await createRequest(h);
    expect((await signIn(h, fresh.id, fresh.code, { client_ip: IP })).status).toBe(200);
  });

  test('the address may have changed since the code was sent: an email update invalidates the requests', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    const update = await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email: 'ada.new@example.com' } });
    expect((await h.call('POST', '/verify-new-email', { body: { request_id: update.json.id, code: update.json.code } })).status).toBe(200);
    expect(await list(h, user.id)).toEqual([]);
    expectError(await signIn(h, created.id, created.code), 400, 'INVALID_REQUEST');
    expectError(await createRaw(h, { email: 'ada@example.com' }), 404, 'NOT_FOUND');
    const renewed = await createRequest(h, 'ada.new@example.com');
    expect((await signIn(h, renewed.id, renewed.code)).json).toMatchObject({ email: 'ada.new@example.com', email_verified: true });
  });
});

describe('a disabled user (API.md §14)', () => {
  const disable = (h: Harness, id: string, until: number | null = null) => updateRows(h, 'users', { disabled: true, disabledUntil: until }, { id });
  const enable = (h: Harness, id: string) => updateRows(h, 'users', { disabled: false, disabledUntil: null }, { id });

  test('gets no sign-in request: USER_DISABLED after INVALID_DATA and NOT_FOUND, before the per-user limit', async () => {
    const { h, user } = await setup();
    for (let i = 0; i < 3; i++) await createRequest(h);
    await disable(h, user.id);
    expectError(await createRaw(h, { email: 'not an address' }), 400, 'INVALID_DATA');
    expectError(await createRaw(h, { email: 'nobody@example.com' }), 404, 'NOT_FOUND');
    // The user's 3 creations are used up, yet the state answers first.
    expectError(await createRaw(h, { email: 'ada@example.com' }), 400, 'USER_DISABLED');
    // The address token, spent before the address is looked up (for known and unknown ones alike), still comes first.
    for (let i = 0; i < 5; i++) expectError(await createRaw(h, { email: 'ada@example.com', client_ip: IP }), 400, 'USER_DISABLED');
    expectRetryAfter(await createRaw(h, { email: 'ada@example.com', client_ip: IP }));
    expect((await list(h, user.id)).length).toBe(3);
  });

  test('a disabled_until that has passed reads as enabled', async () => {
    const { h, user } = await setup();
    await disable(h, user.id, Math.floor(h.now() / 1000) + 60);
    expectError(await createRaw(h, { email: 'ada@example.com' }), 400, 'USER_DISABLED');
    h.advance(60_000);
    const created = await createRequest(h);
    expect((await signIn(h, created.id, created.code)).json).toMatchObject({ id: user.id, disabled: false, disabled_until: null });
  });

  test('a wrong code counts as usual; a correct one answers USER_DISABLED and uses nothing up, so it works once enabled', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    await disable(h, user.id);
    const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
    expect(await during(async () => expectError(await signIn(h, created.id, wrongCode(created.code), { client_ip: IP }), 400, 'INCORRECT_CODE'))).toEqual([
      ['email_code.incorrect', user.id, IP],
    ]);
    expect(await during(async () => expectError(await signIn(h, created.id, created.code, { client_ip: IP }), 400, 'USER_DISABLED'))).toEqual([]);
    expect(await rowOf(h, created.id)).toMatchObject({ failedAttempts: 1 });
    expect((await h.call('GET', `/users/${user.id}`)).json).toMatchObject({ email_verified: false, disabled: true });
    // Its requests can still be listed and deleted while it is disabled.
    expect((await list(h, user.id)).map((r: { id: string }) => r.id)).toEqual([created.id]);
    await enable(h, user.id);
    expect((await signIn(h, created.id, created.code, { client_ip: IP })).json).toMatchObject({ id: user.id, email_verified: true, disabled: false });
  });
});

describe('support operations (API.md §14)', () => {
  test("clear-lockouts ends the user's creation limit; clear-address-limits ends a block started by wrong codes", async () => {
    const { h, user } = await setup();
    const requests = [await createRequest(h), await createRequest(h), await createRequest(h)];
    expectRetryAfter(await createRaw(h, { email: 'ada@example.com' }));
    expect((await h.call('POST', `/users/${user.id}/clear-lockouts`)).status).toBe(204);
    await createRequest(h);
    for (let i = 0; i < 5; i++) {
      h.advance(TEN_SECONDS);
      expectError(await signIn(h, requests[i % 3]!.id, wrongCode(requests[i % 3]!.code), { client_ip: IP }), 400, 'INCORRECT_CODE');
    }
    expectRetryAfter(await signIn(h, requests[2]!.id, requests[2]!.code, { client_ip: IP }));
    expect((await h.call('POST', '/clear-address-limits', { body: { client_ip: IP } })).status).toBe(204);
    expect((await signIn(h, requests[2]!.id, requests[2]!.code, { client_ip: IP })).json).toMatchObject({ id: user.id });
  });
});

describe('listing and deleting a user’s requests', () => {
  test('GET lists live requests oldest first, ties by id, without codes; 404 for an unknown user', async () => {
    const { h, user } = await setup();
    await h.createUser({ email: 'bob@example.com' });
    const a = await createRequest(h);
    const b = await createRequest(h);
    await createRequest(h, 'bob@example.com');
    h.advance(5000);
    const c = await createRequest(h);
    const listed = await list(h, user.id);
    expect(listed.map((r: { id: string }) => r.id)).toEqual([...[a.id, b.id].sort(), c.id]);
    for (const row of listed) expect(Object.keys(row).sort()).toEqual(['created_at', 'expires_at', 'id', 'user_id']);
    expectError(await h.call('GET', '/users/nosuchuser/email-sign-in-requests'), 404, 'NOT_FOUND');
  });

  test("DELETE removes all of the user's requests and no one else's; 404 for an unknown user", async () => {
    const { h, user } = await setup();
    const bob = await h.createUser({ email: 'bob@example.com' });
    const mine = [await createRequest(h), await createRequest(h)];
    const theirs = await createRequest(h, 'bob@example.com');
    expect((await h.call('DELETE', `/users/${user.id}/email-sign-in-requests`)).status).toBe(204);
    expect(await list(h, user.id)).toEqual([]);
    for (const request of mine) expectError(await signIn(h, request.id, request.code), 400, 'INVALID_REQUEST');
    expect((await list(h, bob.id)).length).toBe(1);
    expect((await signIn(h, theirs.id, theirs.code)).status).toBe(200);
    expect((await h.call('DELETE', `/users/${user.id}/email-sign-in-requests`)).status).toBe(204);
    expectError(await h.call('DELETE', '/users/nosuchuser/email-sign-in-requests'), 404, 'NOT_FOUND');
  });

  test('deleting the user removes its requests; the sweep removes expired ones', async () => {
    const { h, user } = await setup();
    const bob = await h.createUser({ email: 'bob@example.com' });
    await createRequest(h);
    const kept = await createRequest(h, 'bob@example.com');
    expect((await h.call('DELETE', `/users/${user.id}`)).status).toBe(204);
    expect((await rowsOf(h, 'emailSignInRequests')).map((row) => row.id)).toEqual([kept.id]);
    h.advance(TEN_MINUTES);
    const late = await createRequest(h, 'bob@example.com');
    expect(await sweepExpired(h.stores.codeRequests, h.now())).toBe(1);
    expect((await rowsOf(h, 'emailSignInRequests')).map((row) => row.id)).toEqual([late.id]);
    expect((await list(h, bob.id)).map((r: { id: string }) => r.id)).toEqual([late.id]);
  });
});

describe('concurrency (with two instances, the requests alternate between them)', () => {
  test('10 parallel correct redemptions of one request: exactly one 200, the rest INVALID_REQUEST', async () => {
    const { h, user } = await setup();
    const created = await createRequest(h);
    const answers = await Promise.all(Array.from({ length: 10 }, () => signIn(h, created.id, created.code)));
    expect(answers.filter((res) => res.status === 200).length).toBe(1);
    for (const res of answers) if (res.status !== 200) expectError(res, 400, 'INVALID_REQUEST');
    expect(answers.find((res) => res.status === 200)!.json).toMatchObject({ id: user.id, email_verified: true });
    const used = (await rowsOf(h, 'events')).filter((event) => event.type === 'email_code.used');
    expect(used.length).toBe(1);
  });

  test('20 parallel wrong codes: exactly 5 INCORRECT_CODE, the rest INVALID_REQUEST', async () => {
    const { h } = await setup();
    const created = await createRequest(h);
    const answers = await Promise.all(Array.from({ length: 20 }, () => signIn(h, created.id, wrongCode(created.code))));
    const errors = answers.map((res) => res.json?.error);
    expect(errors.filter((e) => e === 'INCORRECT_CODE').length).toBe(5);
    expect(errors.filter((e) => e === 'INVALID_REQUEST').length).toBe(15);
    expect(await rowOf(h, created.id)).toBeNull();
    expect((await rowsOf(h, 'events')).filter((event) => event.type === 'email_code.incorrect').length).toBe(5);
  });

  test('parallel correct and wrong codes: the request is redeemed at most once and never counts past 5', async () => {
    const { h } = await setup();
    const created = await createRequest(h);
    const codes = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? created.code : wrongCode(created.code)));
    const answers = await Promise.all(codes.map((code) => signIn(h, created.id, code)));
    expect(answers.filter((res) => res.status === 200).length).toBeLessThanOrEqual(1);
    expect(answers.filter((res) => res.json?.error === 'INCORRECT_CODE').length).toBeLessThanOrEqual(5);
    for (const res of answers) if (res.status !== 200) expect(['INCORRECT_CODE', 'INVALID_REQUEST']).toContain(res.json.error);
  });
});
