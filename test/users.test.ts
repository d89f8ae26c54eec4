import { describe, expect, test } from 'bun:test';
import { generateId } from '../src/security/random';
import { createHarness, expectError, type Harness, STRONG_PASSWORD, WEAK_PASSWORD } from './support/harness';
import { insertRows, rowOf as storedRow, rowsOf, updateRows, type TableName } from './support/rows';

const ID = /^[abcdefghijkmnpqrstuvwxyz23456789]{24}$/;
const RECOVERY_CODE = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{16}$/;
const USER_FIELDS = ['created_at', 'disabled', 'disabled_until', 'email', 'email_verified', 'id', 'passkey_count', 'registered_totp'];

/** Inserts users straight into the database (no argon2), for tests that need many rows. */
async function insertUsers(h: Harness, rows: { createdAt: number; email?: string | null }[]): Promise<string[]> {
  const values = rows.map((row) => ({
    id: generateId(),
    createdAt: row.createdAt,
    email: row.email ?? null,
    passwordHash: 'not-a-real-hash',
    recoveryCodeHash: 'not-a-real-hash',
  }));
  await insertRows(h, 'users', values);
  return values.map((value) => value.id);
}

const rowOf = (h: Harness, id: string) => storedRow(h, 'users', { id });

describe('POST /users', () => {
  test('creates a user without an email and returns the model with a recovery code', async () => {
    const h = createHarness({ startMs: Date.UTC(2031, 4, 6, 7, 8, 9, 999) });
    const res = await h.call('POST', '/users', { body: { password: STRONG_PASSWORD } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual([...USER_FIELDS, 'recovery_code'].sort());
    expect(res.json).toMatchObject({ email: null, email_verified: false, registered_totp: false });
    expect(res.json.created_at).toBe(Date.UTC(2031, 4, 6, 7, 8, 9) / 1000);
    expect(res.json.id).toMatch(ID);
    expect(res.json.recovery_code).toMatch(RECOVERY_CODE);
  });

  test('created_at follows the injected clock', async () => {
    const h = createHarness();
    h.setNow(Date.UTC(2040, 0, 2, 3, 4, 5, 678));
    const user = await h.createUser();
    expect(user.created_at).toBe(Date.UTC(2040, 0, 2, 3, 4, 5) / 1000);
    expect((await h.call('GET', `/users/${user.id}`)).json.created_at).toBe(user.created_at);
  });

  test('ids and recovery codes are fresh for every user', async () => {
    const h = createHarness();
    const created = await Promise.all(Array.from({ length: 6 }, () => h.createUser()));
    expect(new Set(created.map((user) => user.id)).size).toBe(6);
    expect(new Set(created.map((user) => user.recovery_code)).size).toBe(6);
    for (const user of created) {
      expect(user.id).toMatch(ID);
      expect(user.recovery_code).toMatch(RECOVERY_CODE);
    }
  });

  test('email is optional, may be null, and is stored lower-cased', async () => {
    const h = createHarness();
    expect((await h.createUser({ email: null })).email).toBeNull();
    const mixed = await h.createUser({ email: 'Ada.Lovelace@Example.COM' });
    expect(mixed.email).toBe('ada.lovelace@example.com');
    expect((await h.call('GET', `/users/${mixed.id}`)).json.email).toBe('ada.lovelace@example.com');
    expect((await rowOf(h, mixed.id))?.email).toBe('ada.lovelace@example.com');
  });

  test('an email of 255 characters is accepted', async () => {
    const h = createHarness();
    const email = `${'a'.repeat(243)}@example.com`;
    expect(email).toHaveLength(255);
    expect((await h.createUser({ email })).email).toBe(email);
  });

  test.each([
    ['no @', 'ada.example.com'],
    ['no dot after the @', 'ada@localhost'],
    ['a dot only before the last @', 'ada.l@example@localhost'],
    ['256 characters', `${'a'.repeat(244)}@example.com`],
    ['a leading space', ' ada@example.com'],
    ['a trailing space', 'ada@example.com '],
    ['a leading tab', '\tada@example.com'],
    ['a trailing newline', 'ada@example.com\n'],
    ['the empty string', ''],
  ])('an email with %s → INVALID_DATA', async (_, email) => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email } }), 400, 'INVALID_DATA');
    expect((await h.call('GET', '/users')).json).toEqual([]);
  });

  test.each([
    ['a number', 42],
    ['an array', ['ada@example.com']],
    ['an object', { address: 'ada@example.com' }],
    ['a boolean', false],
  ])('email as %s → INVALID_DATA', async (_, email) => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email } }), 400, 'INVALID_DATA');
  });

  test('password length is counted in code points: 8 to 127', async () => {
    const h = createHarness();
    const emoji = '😀';
    for (const password of ['a'.repeat(7), 'a'.repeat(128), emoji.repeat(7), emoji.repeat(128), '']) {
      expectError(await h.call('POST', '/users', { body: { password } }), 400, 'INVALID_DATA');
    }
    // 8 emoji are 16 UTF-16 units, 127 emoji are 254: still valid.
    for (const password of ['abcdefgh', 'q'.repeat(127), emoji.repeat(8), emoji.repeat(127)]) {
      const res = await h.call('POST', '/users', { body: { password } });
      expect(res.status).toBe(200);
      const verify = await h.call('POST', `/users/${res.json.id}/verify-password`, { body: { password } });
      expect(verify.status).toBe(204);
    }
  });

  test('a breached password → WEAK_PASSWORD and nothing is created', async () => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, email: 'weak@example.com' } }), 400, 'WEAK_PASSWORD');
    expect((await h.call('GET', '/users')).headers.get('x-pagination-total')).toBe('0');
    expect((await h.createUser({ email: 'weak@example.com' })).email).toBe('weak@example.com');
  });

  test('a taken email → EMAIL_ALREADY_USED, also in another case', async () => {
    const h = createHarness();
    await h.createUser({ email: 'taken@example.com' });
    for (const email of ['taken@example.com', 'TAKEN@Example.com']) {
      expectError(await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email } }), 400, 'EMAIL_ALREADY_USED');
    }
    expect((await h.call('GET', '/users')).headers.get('x-pagination-total')).toBe('1');
  });

  test('two concurrent creations with one email: exactly one wins', async () => {
    const h = createHarness();
    const results = await Promise.all(
      ['race@example.com', 'RACE@example.com', 'race@EXAMPLE.com'].map((email) =>
        h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email } }),
      ),
    );
    expect(results.map((res) => res.status).sort()).toEqual([200, 400, 400]);
    for (const res of results.filter((r) => r.status === 400)) expect(res.json).toEqual({ error: 'EMAIL_ALREADY_USED' });
    expect((await h.call('GET', '/users')).json).toHaveLength(1);
  });

  test('5 calls per client_ip, then TOO_MANY_REQUESTS until a token comes back every 10 s', async () => {
    const h = createHarness();
    const ip = '203.0.113.50';
    const create = () => h.call('POST', '/users', { body: { password: STRONG_PASSWORD, client_ip: ip } });
    for (let i = 0; i < 5; i++) expect((await create()).status).toBe(200);
    const limited = await create();
    expectError(limited, 400, 'TOO_MANY_REQUESTS');
    expect(limited.headers.get('retry-after')).toBe('10');
    h.advance(9_999);
    expectError(await create(), 400, 'TOO_MANY_REQUESTS');
    h.advance(1);
    expect((await create()).status).toBe(200);
    expectError(await create(), 400, 'TOO_MANY_REQUESTS');
    h.advance(20_000);
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(200);
    expectError(await create(), 400, 'TOO_MANY_REQUESTS');
    // Other addresses and calls without an address are unaffected.
    expect((await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, client_ip: '203.0.113.51' } })).status).toBe(200);
    expect((await h.call('POST', '/users', { body: { password: STRONG_PASSWORD } })).status).toBe(200);
    expect((await h.call('GET', '/users')).headers.get('x-pagination-total')).toBe('10');
  });

  test('the recovery code appears only in the create response', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'once@example.com' });
    const views = [
      await h.call('GET', `/users/${user.id}`),
      await h.call('GET', '/users'),
      await h.call('POST', '/authenticate/password', { body: { email: 'once@example.com', password: STRONG_PASSWORD } }),
    ];
    for (const view of views) {
      expect(view.status).toBe(200);
      expect(view.text).not.toContain('recovery_code');
      expect(view.text).not.toContain(user.recovery_code);
    }
  });

  test('the password and recovery code are stored only as argon2id hashes (m=19456, t=2)', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'stored@example.com' });
    const row = (await rowOf(h, user.id))!;
    const argon2id = /^\$argon2id\$v=19\$m=19456,t=2,p=\d+\$/;
    expect(row.passwordHash).toMatch(argon2id);
    expect(row.recoveryCodeHash).toMatch(argon2id);
    expect(await Bun.password.verify(STRONG_PASSWORD, row.passwordHash)).toBe(true);
    expect(await Bun.password.verify(user.recovery_code, row.recoveryCodeHash)).toBe(true);
    const everything = JSON.stringify(await rowsOf(h, 'users'));
    expect(everything).not.toContain(STRONG_PASSWORD);
    expect(everything).not.toContain(user.recovery_code);
  });
});

describe('GET /users/{id}', () => {
  test('returns exactly the model fields', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'get@example.com' });
    const res = await h.call('GET', `/users/${user.id}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      id: user.id,
      created_at: user.created_at,
      email: 'get@example.com',
      email_verified: false,
      registered_totp: false,
      passkey_count: 0,
      disabled: false,
      disabled_until: null,
    });
  });

  test('reflects email_verified and a TOTP credential', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await updateRows(h, 'users', { emailVerified: true }, { id: user.id });
    await insertRows(h, 'totpCredentials', [{ userId: user.id, createdAt: 1, key: 'AAAA', lastUsedStep: 0 }]);
    const res = await h.call('GET', `/users/${user.id}`);
    expect(res.json).toMatchObject({ email_verified: true, registered_totp: true });
  });

  test.each(['nosuchuser', generateId(), 'a%20b', 'x'.repeat(500)])('unknown id %s → 404 NOT_FOUND', async (id) => {
    const h = createHarness();
    await h.createUser();
    expectError(await h.call('GET', `/users/${id}`), 404, 'NOT_FOUND');
  });
});

describe('DELETE /users/{id}', () => {
  test('204, then the user is gone', async () => {
    const h = createHarness();
    const user = await h.createUser({ email: 'gone@example.com' });
    const res = await h.call('DELETE', `/users/${user.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await h.call('GET', `/users/${user.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/users/${user.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD } }), 404, 'NOT_FOUND');
    expect((await h.call('GET', '/users')).headers.get('x-pagination-total')).toBe('0');
    // The email is free again.
    expect((await h.createUser({ email: 'gone@example.com' })).email).toBe('gone@example.com');
  });

  test('unknown id → 404 NOT_FOUND', async () => {
    const h = createHarness();
    expectError(await h.call('DELETE', '/users/nosuchuser'), 404, 'NOT_FOUND');
  });

  test('10 parallel deletes of one user: exactly one 204 and one user.deleted event, the rest 404', async () => {
    const h = createHarness();
    const [user] = (await insertUsers(h, [{ createdAt: 1 }])) as [string];
    const answers = await Promise.all(Array.from({ length: 10 }, () => h.call('DELETE', `/users/${user}`)));
    expect(answers.filter((res) => res.status === 204).length).toBe(1);
    for (const res of answers) if (res.status !== 204) expectError(res, 404, 'NOT_FOUND');
    const events = (await h.call('GET', `/events?user_id=${user}&type=user.deleted`)).json as unknown[];
    expect(events.length).toBe(1);
  });

  test("cascades to the user's requests and TOTP credential, and leaves other users' alone", async () => {
    const h = createHarness();
    const [doomed, kept] = (await insertUsers(h, [{ createdAt: 1 }, { createdAt: 2 }])) as [string, string];
    for (const userId of [doomed, kept]) {
      await insertRows(h, 'passwordResetRequests', [{ id: generateId(), userId, createdAt: 1, expiresAt: 2, codeHash: 'h' }]);
      await insertRows(h, 'emailVerificationRequests', [{ userId, createdAt: 1, expiresAt: 2, code: 'ABCDEFGH' }]);
      await insertRows(h, 'emailUpdateRequests', [{ id: generateId(), userId, createdAt: 1, expiresAt: 2, email: 'n@example.com', code: 'ABCDEFGH' }]);
      await insertRows(h, 'emailSignInRequests', [{ id: generateId(), userId, createdAt: 1, expiresAt: 2, email: 'n@example.com', codeHash: 'h' }]);
      await insertRows(h, 'totpCredentials', [{ userId, createdAt: 1, key: 'AAAA', lastUsedStep: 0 }]);
    }
    expect((await h.call('DELETE', `/users/${doomed}`)).status).toBe(204);
    const tables: TableName[] = ['passwordResetRequests', 'emailVerificationRequests', 'emailUpdateRequests', 'emailSignInRequests', 'totpCredentials'];
    for (const table of tables) {
      const owners = (await rowsOf(h, table)).map((row) => row.userId);
      expect({ table, owners }).toEqual({ table, owners: [kept] });
    }
  });
});

describe('GET /users pagination', () => {
  /** 45 users whose created_at values repeat, so ordering needs the id tie-break. */
  async function seeded() {
    const h = createHarness();
    const ids = await insertUsers(h, Array.from({ length: 45 }, (_, i) => ({ createdAt: 1_700_000_000 + ((i * 7) % 9) })));
    const createdAt = new Map((await rowsOf(h, 'users')).map((r) => [r.id as string, r.createdAt as number]));
    const byCreated = [...ids].sort((a, b) => createdAt.get(a)! - createdAt.get(b)! || (a < b ? -1 : 1));
    const byId = [...ids].sort();
    return { h, byCreated, byId };
  }
  const idsOf = (res: { json: { id: string }[] }) => res.json.map((user) => user.id);
  const pagination = (res: { headers: Headers }) => [res.headers.get('x-pagination-total'), res.headers.get('x-pagination-total-pages')];

  test('defaults: 20 per page, page 1, created_at ascending with ties by id', async () => {
    const { h, byCreated } = await seeded();
    const res = await h.call('GET', '/users');
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(byCreated.slice(0, 20));
    expect(pagination(res)).toEqual(['45', '3']);
    for (const user of res.json) expect(Object.keys(user).sort()).toEqual(USER_FIELDS);
  });

  test('pages, a partial last page and a page past the end', async () => {
    const { h, byCreated } = await seeded();
    expect(idsOf(await h.call('GET', '/users?page=2'))).toEqual(byCreated.slice(20, 40));
    const last = await h.call('GET', '/users?page=3');
    expect(idsOf(last)).toEqual(byCreated.slice(40));
    expect(pagination(last)).toEqual(['45', '3']);
    for (const page of ['4', '1000', '99999999999999999999']) {
      const past = await h.call('GET', `/users?page=${page}`);
      expect(past.status).toBe(200);
      expect(past.json).toEqual([]);
      expect(pagination(past)).toEqual(['45', '3']);
    }
    const farOut = await h.call('GET', '/users?per_page=1000&page=99999999999999999999');
    expect(farOut.json).toEqual([]);
    expect(pagination(farOut)).toEqual(['45', '1']);
    const seven = await h.call('GET', '/users?per_page=7&page=7');
    expect(idsOf(seven)).toEqual(byCreated.slice(42));
    expect(pagination(seven)).toEqual(['45', '7']);
  });

  test('sort_by id and created_at, both directions', async () => {
    const { h, byCreated, byId } = await seeded();
    expect(idsOf(await h.call('GET', '/users?sort_by=id&per_page=100'))).toEqual(byId);
    expect(idsOf(await h.call('GET', '/users?sort_by=id&sort_order=descending&per_page=100'))).toEqual([...byId].reverse());
    expect(idsOf(await h.call('GET', '/users?sort_by=created_at&sort_order=ascending&per_page=100'))).toEqual(byCreated);
    expect(idsOf(await h.call('GET', '/users?sort_order=descending&per_page=100'))).toEqual([...byCreated].reverse());
    expect(idsOf(await h.call('GET', '/users?sort_order=descending&per_page=20&page=3'))).toEqual([...byCreated].reverse().slice(40));
  });

  test('users created in the same second through the API: descending is the exact reverse of ascending', async () => {
    const h = createHarness();
    for (let second = 0; second < 2; second++) {
      await Promise.all(Array.from({ length: 4 }, () => h.createUser()));
      h.advance(1_000);
    }
    const ascending = idsOf(await h.call('GET', '/users'));
    const descending = idsOf(await h.call('GET', '/users?sort_order=descending'));
    expect(ascending).toHaveLength(8);
    expect(descending).toEqual([...ascending].reverse());
    expect(ascending.slice(0, 4)).toEqual([...ascending.slice(0, 4)].sort());
    expect(ascending.slice(4)).toEqual([...ascending.slice(4)].sort());
  });

  test('per_page is capped at 1000', async () => {
    const h = createHarness();
    const ids = await insertUsers(h, Array.from({ length: 1005 }, (_, i) => ({ createdAt: 1_000 + i })));
    for (const perPage of ['1000', '1001', '5000', '99999999999999999999']) {
      const res = await h.call('GET', `/users?per_page=${perPage}`);
      expect(idsOf(res)).toEqual(ids.slice(0, 1000));
      expect(pagination(res)).toEqual(['1005', '2']);
    }
    expect(idsOf(await h.call('GET', '/users?per_page=5000&page=2'))).toEqual(ids.slice(1000));
  });

  test.each([
    'per_page=0',
    'per_page=-1',
    'per_page=1.5',
    'per_page=abc',
    'per_page=10abc',
    'per_page=',
    'per_page=+5',
    'per_page=%205',
    'per_page=2&per_page=3',
    'per_page[]=5',
    'page=0',
    'page=-2',
    'page=abc',
    'page=1.0',
    'page=',
    'page=2&page=3',
    'sort_by=ID',
    'sort_by=email',
    'sort_by=',
    'sort_order=DESC',
    'sort_order=desc',
    'sort_order=Descending',
    'sort_by=id&sort_by=id',
    'unknown=1',
  ])('%s falls back to the defaults, never 400', async (query) => {
    const { h, byCreated } = await seeded();
    const res = await h.call('GET', `/users?${query}`);
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual(byCreated.slice(0, 20));
    expect(pagination(res)).toEqual(['45', '3']);
  });

  test('an empty set: [] with total 0 and 0 pages', async () => {
    const h = createHarness();
    for (const query of ['', '?page=2', '?per_page=5&sort_by=id&sort_order=descending']) {
      const res = await h.call('GET', `/users${query}`);
      expect(res.status).toBe(200);
      expect(res.text).toBe('[]');
      expect(pagination(res)).toEqual(['0', '0']);
    }
  });

  test('email_query: case-insensitive substring, % and _ literal, headers count the filtered set', async () => {
    const h = createHarness();
    const emails = ['a%b@x.io', 'axb@x.io', 'a_c@x.io', 'abc@x.io', 'alice@example.com', 'BOB@Example.com', 'carol@sample.org'];
    const ids = await insertUsers(h, [...emails.map((email, i) => ({ createdAt: 10 + i, email: email.toLowerCase() })), { createdAt: 99 }]);
    const emailsFor = async (query: string) => {
      const res = await h.call('GET', `/users?${query}`);
      expect(res.status).toBe(200);
      return { emails: res.json.map((user: { email: string }) => user.email), pages: pagination(res) };
    };
    expect(await emailsFor('email_query=%25')).toEqual({ emails: ['a%b@x.io'], pages: ['1', '1'] });
    expect(await emailsFor('email_query=_')).toEqual({ emails: ['a_c@x.io'], pages: ['1', '1'] });
    expect(await emailsFor('email_query=a%25b')).toEqual({ emails: ['a%b@x.io'], pages: ['1', '1'] });
    expect(await emailsFor('email_query=EXAMPLE.COM')).toEqual({ emails: ['alice@example.com', 'bob@example.com'], pages: ['2', '1'] });
    expect(await emailsFor('email_query=Ample')).toEqual({ emails: ['alice@example.com', 'bob@example.com', 'carol@sample.org'], pages: ['3', '1'] });
    expect(await emailsFor('email_query=ample&per_page=2&page=2')).toEqual({ emails: ['carol@sample.org'], pages: ['3', '2'] });
    expect(await emailsFor('email_query=ample&per_page=2&sort_order=descending')).toEqual({ emails: ['carol@sample.org', 'bob@example.com'], pages: ['3', '2'] });
    expect(await emailsFor('email_query=nomatch')).toEqual({ emails: [], pages: ['0', '0'] });
    const all = await emailsFor('email_query=');
    expect(all.pages).toEqual(['8', '1']);
    expect((await h.call('GET', '/users')).json.map((user: { id: string }) => user.id)).toEqual(ids);
  });
});
