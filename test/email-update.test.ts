import { describe, expect, test } from 'bun:test';
import { sha256Hex } from '../src/security/digest';
import { generateId } from '../src/security/random';
import { createHarness, expectError, type Harness } from './support/harness';
import { insertRows, rowOf, rowsOf } from './support/rows';

const MINUTE = 60_000;
const ID_FORMAT = /^[abcdefghijkmnpqrstuvwxyz23456789]{24}$/;
const CODE_FORMAT = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/;

type UpdateRequest = { id: string; user_id: string; created_at: number; expires_at: number; email: string; code: string };

const wrongCodeFor = (code: string): string => (code[0] === 'A' ? 'B' : 'A') + code.slice(1);

async function setup(email: string | null = 'ada@example.com') {
  const h = createHarness();
  const user = await h.createUser({ email });
  return { h, user, path: `/users/${user.id}` };
}

async function requestUpdate(h: Harness, userId: string, email: string): Promise<UpdateRequest> {
  const res = await h.call('POST', `/users/${userId}/email-update-requests`, { body: { email } });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}

const verifyNewEmail = (h: Harness, requestId: unknown, code: unknown) =>
  h.call('POST', '/verify-new-email', { body: { request_id: requestId, code } });

async function expectWrongCodes(h: Harness, request: UpdateRequest, times: number) {
  for (let i = 0; i < times; i++) expectError(await verifyNewEmail(h, request.id, wrongCodeFor(request.code)), 400, 'INCORRECT_CODE');
}

async function insertResetRequest(h: Harness, userId: string): Promise<string> {
  const id = generateId();
  const now = Math.floor(h.now() / 1000);
  await insertRows(h, 'passwordResetRequests', [{ id, userId, createdAt: now, expiresAt: now + 600, codeHash: sha256Hex('AAAAAAAA') }]);
  return id;
}

const resetRequestIdsOf = async (h: Harness, userId: string) => (await rowsOf(h, 'passwordResetRequests', { userId })).map((r) => r.id as string);

describe('email update', () => {
  test('create (lower-cased), read, then confirm with a lower-case code', async () => {
    const { h, user, path } = await setup();
    const created = await requestUpdate(h, user.id, 'New.Address@Example.COM');
    const now = Math.floor(h.now() / 1000);
    expect(created).toEqual({
      id: expect.stringMatching(ID_FORMAT),
      user_id: user.id,
      created_at: now,
      expires_at: now + 600,
      email: 'new.address@example.com',
      code: expect.stringMatching(CODE_FORMAT),
    });
    expect((await h.call('GET', `/email-update-requests/${created.id}`)).json).toEqual(created);
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual([created]);

    const res = await verifyNewEmail(h, created.id, created.code.toLowerCase());
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ email: 'new.address@example.com' });
    const after = (await h.call('GET', path)).json;
    expect(after.email).toBe('new.address@example.com');
    expect(after.email_verified).toBe(true);
    expectError(await h.call('GET', `/email-update-requests/${created.id}`), 404, 'NOT_FOUND');
    expectError(await verifyNewEmail(h, created.id, created.code), 400, 'INVALID_REQUEST');
  });

  test("the user's own current address is allowed, and a user without an email may add one", async () => {
    const { h, user, path } = await setup('me@example.com');
    const own = await requestUpdate(h, user.id, 'ME@example.com');
    expect((await verifyNewEmail(h, own.id, own.code)).json).toEqual({ email: 'me@example.com' });
    expect((await h.call('GET', path)).json.email_verified).toBe(true);

    const bare = await h.createUser();
    const added = await requestUpdate(h, bare.id, 'bare@example.com');
    expect((await verifyNewEmail(h, added.id, added.code)).status).toBe(200);
    expect((await h.call('GET', `/users/${bare.id}`)).json.email).toBe('bare@example.com');
  });

  test('unknown users and requests are 404, before the body is looked at', async () => {
    const { h } = await setup();
    const path = '/users/unknownuserunknownuser23';
    expectError(await h.call('POST', `${path}/email-update-requests`, { body: { email: 'a@b.co' } }), 404, 'NOT_FOUND');
    expectError(await h.call('POST', `${path}/email-update-requests`, { rawBody: 'not json' }), 404, 'NOT_FOUND');
    expectError(await h.call('GET', `${path}/email-update-requests`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `${path}/email-update-requests`), 404, 'NOT_FOUND');
    expectError(await h.call('GET', '/email-update-requests/unknownrequestunknownreq'), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', '/email-update-requests/unknownrequestunknownreq'), 404, 'NOT_FOUND');
  });

  test('malformed create bodies are INVALID_DATA', async () => {
    const { h, path } = await setup();
    const bad = [{}, { email: null }, { email: 42 }, { email: 'no-at.example.com' }, { email: 'a@nodot' }, { email: ' a@b.co' },
      { email: 'a@b.co ' }, { email: `${'a'.repeat(250)}@b.com` }];
    for (const body of bad) expectError(await h.call('POST', `${path}/email-update-requests`, { body }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', `${path}/email-update-requests`, { rawBody: 'not json' }), 400, 'INVALID_DATA');
    // Malformed bodies do not spend the creation limit.
    for (let i = 0; i < 3; i++) await requestUpdate(h, path.slice(7), `n${i}@example.com`);
  });

  test('an address held by another user is EMAIL_ALREADY_USED at creation', async () => {
    const { h, path } = await setup();
    await h.createUser({ email: 'taken@example.com' });
    expectError(await h.call('POST', `${path}/email-update-requests`, { body: { email: 'Taken@Example.com' } }), 400, 'EMAIL_ALREADY_USED');
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual([]);
  });

  test('the 4th creation within 15 minutes is TOO_MANY_REQUESTS with Retry-After', async () => {
    const { h, user, path } = await setup();
    await requestUpdate(h, user.id, 'one@example.com');
    h.advance(MINUTE);
    await requestUpdate(h, user.id, 'two@example.com');
    await requestUpdate(h, user.id, 'three@example.com');
    const refused = await h.call('POST', `${path}/email-update-requests`, { body: { email: 'four@example.com' } });
    expectError(refused, 400, 'TOO_MANY_REQUESTS');
    expect(refused.headers.get('retry-after')).toBe('840');
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toHaveLength(3);
    h.advance(14 * MINUTE);
    await requestUpdate(h, user.id, 'four@example.com');
  });

  test('the list holds live requests oldest first, ties by id; DELETE removes them all', async () => {
    const { h, user, path } = await setup();
    const early = await requestUpdate(h, user.id, 'early@example.com');
    h.advance(5 * MINUTE);
    const tied = [await requestUpdate(h, user.id, 'x@example.com'), await requestUpdate(h, user.id, 'y@example.com')];
    tied.sort((a, b) => (a.id < b.id ? -1 : 1));
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual([early, ...tied]);
    h.advance(5 * MINUTE); // the first one expires
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual(tied);

    const other = await h.createUser();
    const othersRequest = await requestUpdate(h, other.id, 'z@example.com');
    const cleared = await h.call('DELETE', `${path}/email-update-requests`);
    expect(cleared.status).toBe(204);
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual([]);
    for (const r of tied) expectError(await h.call('GET', `/email-update-requests/${r.id}`), 404, 'NOT_FOUND');
    expect((await h.call('GET', `/email-update-requests/${othersRequest.id}`)).status).toBe(200);
    expect((await h.call('DELETE', `${path}/email-update-requests`)).status).toBe(204);
  });

  test('DELETE of one request invalidates it', async () => {
    const { h, user } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    expect((await h.call('DELETE', `/email-update-requests/${request.id}`)).status).toBe(204);
    expectError(await h.call('GET', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expectError(await verifyNewEmail(h, request.id, request.code), 400, 'INVALID_REQUEST');
  });

  test('a request expires after 10 minutes', async () => {
    const { h, user, path } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    h.advance(10 * MINUTE - 1000);
    expect((await h.call('GET', `/email-update-requests/${request.id}`)).status).toBe(200);
    h.advance(1000);
    expectError(await h.call('GET', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expect((await h.call('GET', `${path}/email-update-requests`)).json).toEqual([]);
    expectError(await verifyNewEmail(h, request.id, request.code), 400, 'INVALID_REQUEST');
    expect((await h.call('GET', path)).json.email).toBe('ada@example.com');
  });

  test('verify-new-email: INVALID_DATA before INVALID_REQUEST, and no attempt counted', async () => {
    const { h, user } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    const bad = [{}, { request_id: request.id }, { code: request.code }, { request_id: 7, code: request.code },
      { request_id: request.id, code: 'SHORT' }, { request_id: request.id, code: 'ABCDEFG0' }, { request_id: 'unknown', code: 'bad' }];
    for (const body of bad) expectError(await h.call('POST', '/verify-new-email', { body }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/verify-new-email', { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expectError(await verifyNewEmail(h, 'unknownrequestunknownreq', 'AAAAAAAA'), 400, 'INVALID_REQUEST');
    const row = await rowOf(h, 'emailUpdateRequests', { id: request.id });
    expect(row?.failedAttempts).toBe(0);
    expect((await verifyNewEmail(h, request.id, request.code)).status).toBe(200);
  });

  test('the 5th wrong code invalidates the request', async () => {
    const { h, user } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    await expectWrongCodes(h, request, 4);
    expect((await h.call('GET', `/email-update-requests/${request.id}`)).status).toBe(200);
    await expectWrongCodes(h, request, 1);
    expectError(await h.call('GET', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expectError(await verifyNewEmail(h, request.id, request.code), 400, 'INVALID_REQUEST');
  });

  test('5 wrong email codes lock the user: TOO_MANY_REQUESTS after INVALID_REQUEST, separate from verify-email', async () => {
    const { h, user, path } = await setup();
    const first = await requestUpdate(h, user.id, 'new@example.com');
    await expectWrongCodes(h, first, 5);
    const second = await requestUpdate(h, user.id, 'new@example.com');
    const locked = await verifyNewEmail(h, second.id, second.code);
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(locked.headers.get('retry-after')).toBe('900');
    expectError(await verifyNewEmail(h, first.id, first.code), 400, 'INVALID_REQUEST');
    // verify-email has its own lockout (API.md §5: each second-factor check its own).
    const verification = (await h.call('POST', `${path}/email-verification-request`)).json;
    expect((await h.call('POST', `${path}/verify-email`, { body: { code: verification.code } })).status).toBe(204);

    h.advance(15 * MINUTE);
    const third = await requestUpdate(h, user.id, 'new@example.com');
    expect((await verifyNewEmail(h, third.id, third.code)).status).toBe(200);
  });

  test("success invalidates every request for the address and the user's reset requests", async () => {
    const { h, user } = await setup();
    const other = await h.createUser({ email: 'other@example.com' });
    const mine = await requestUpdate(h, user.id, 'shared@example.com');
    const mineAgain = await requestUpdate(h, user.id, 'shared@example.com');
    const mineElsewhere = await requestUpdate(h, user.id, 'elsewhere@example.com');
    const theirs = await requestUpdate(h, other.id, 'shared@example.com');
    const myResets = [await insertResetRequest(h, user.id), await insertResetRequest(h, user.id)];
    const theirReset = await insertResetRequest(h, other.id);
    expect((await resetRequestIdsOf(h, user.id)).sort()).toEqual(myResets.sort());

    expect((await verifyNewEmail(h, mine.id, mine.code)).json).toEqual({ email: 'shared@example.com' });
    for (const gone of [mineAgain, theirs]) {
      expectError(await h.call('GET', `/email-update-requests/${gone.id}`), 404, 'NOT_FOUND');
      expectError(await verifyNewEmail(h, gone.id, gone.code), 400, 'INVALID_REQUEST');
    }
    expect((await h.call('GET', `/email-update-requests/${mineElsewhere.id}`)).status).toBe(200);
    expect(await resetRequestIdsOf(h, user.id)).toEqual([]);
    expect(await resetRequestIdsOf(h, other.id)).toEqual([theirReset]);
    expect((await h.call('GET', `/users/${other.id}`)).json.email).toBe('other@example.com');
  });

  test('an address taken meanwhile is EMAIL_ALREADY_USED at confirmation and invalidates the request', async () => {
    const { h, user, path } = await setup();
    const request = await requestUpdate(h, user.id, 'late@example.com');
    const reset = await insertResetRequest(h, user.id);
    await h.createUser({ email: 'late@example.com' });
    expectError(await verifyNewEmail(h, request.id, request.code), 400, 'EMAIL_ALREADY_USED');
    expectError(await h.call('GET', `/email-update-requests/${request.id}`), 404, 'NOT_FOUND');
    expectError(await verifyNewEmail(h, request.id, request.code), 400, 'INVALID_REQUEST');
    const after = (await h.call('GET', path)).json;
    expect(after.email).toBe('ada@example.com');
    expect(after.email_verified).toBe(false);
    expect(await resetRequestIdsOf(h, user.id)).toEqual([reset]);
  });

  test('20 parallel wrong codes count exactly 5', async () => {
    const { h, user } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    const results = await Promise.all(Array.from({ length: 20 }, () => verifyNewEmail(h, request.id, wrongCodeFor(request.code))));
    const errors = results.map((r) => r.json.error);
    expect(errors.filter((e) => e === 'INCORRECT_CODE')).toHaveLength(5);
    expect(errors.filter((e) => e === 'INVALID_REQUEST')).toHaveLength(15);
  });

  test('parallel correct codes succeed exactly once', async () => {
    const { h, user } = await setup();
    const request = await requestUpdate(h, user.id, 'new@example.com');
    const results = await Promise.all(Array.from({ length: 10 }, () => verifyNewEmail(h, request.id, request.code)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.json?.error === 'INVALID_REQUEST')).toHaveLength(9);
  });
});
