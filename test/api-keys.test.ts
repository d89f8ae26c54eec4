import { describe, expect, test } from 'bun:test';
import { generateTotpCode, parseTotpKey } from '../src/security/totp';
import { eventsDuring, expectNoneOf, summary, tableTexts } from './support/events';
import { createHarness, expectError, type Harness } from './support/harness';
import { passkeyHarness, registered, softAuthenticator } from './support/passkeys';
import { parseSamples } from './support/prom-text';
import { rowOf, rowsOf, snapshot } from './support/rows';

/** End-user API keys (API.md §18), on every set-up: SQLite, PostgreSQL + Redis with one and two instances. */

const MINUTE = 60_000;
const KEY_SHAPE = /^gh_[abcdefghijkmnpqrstuvwxyz23456789]{24}_[A-Za-z0-9_-]{43}$/;
type Created = { id: string; user_id: string; name: string; scopes: string[]; created_at: number; expires_at: number | null; last_used_at: number | null; start: string; key: string };

async function setup() {
  const h = createHarness();
  const user = await h.createUser({ email: 'ada@example.com' });
  return { h, user };
}

const createRaw = (h: Harness, userId: string, body: unknown) => h.call('POST', `/users/${userId}/api-keys`, { body });
async function createKey(h: Harness, userId: string, body: Record<string, unknown> = {}): Promise<Created> {
  const res = await createRaw(h, userId, { name: 'CI deploys', ...body });
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${res.text}`);
  return res.json;
}
const verify = (h: Harness, key: unknown, scopes?: unknown) => h.call('POST', '/verify-api-key', { body: scopes === undefined ? { key } : { key, scopes } });
const list = async (h: Harness, userId: string) => (await h.call('GET', `/users/${userId}/api-keys`)).json;
const seconds = (h: Harness) => Math.floor(h.now() / 1000);
/** `key` with the character at `i` replaced by another of the same alphabet. */
const flipped = (key: string, i: number) => key.slice(0, i) + (key[i] === 'a' ? 'b' : 'a') + key.slice(i + 1);

describe('creating and listing keys', () => {
  test('the key is shown once, its hash stored, listed oldest first without it, with an api_key.created event', async () => {
    const { h, user } = await setup();
    let first: Created | undefined;
    const events = await eventsDuring(h, async () => {
      first = await createKey(h, user.id, { scopes: ['repo:read', 'deploy.prod_eu-1'] });
    });
    const created = first!;
    expect(created.key).toMatch(KEY_SHAPE);
    expect(created).toEqual({
      id: created.key.slice(3, 27), user_id: user.id, name: 'CI deploys', scopes: ['repo:read', 'deploy.prod_eu-1'],
      created_at: seconds(h), expires_at: null, last_used_at: null, start: created.key.slice(0, 12), key: created.key,
    });
    expect(summary(events)).toEqual([['api_key.created', user.id, null]]);
    const row = await rowOf(h, 'apiKeys', { id: created.id });
    expect(row!.secretHash).toBe(new Bun.CryptoHasher('sha256').update(created.key.slice(28)).digest('hex'));
    expectNoneOf([...(await tableTexts(h, ['api_keys', 'events'])), ...h.logs.map((l) => JSON.stringify(l))], [created.key, created.key.slice(28)]);

    h.advance(1000);
    const second = await createKey(h, user.id, { name: 'second', expires_at: seconds(h) + 3600 });
    const third = await createKey(h, user.id, { name: 'third', expires_at: null });
    const { key: _k, ...firstView } = created;
    const listed = await list(h, user.id);
    expect(listed[0]).toEqual(firstView);
    expect(listed.map((k: Created) => k.id)).toEqual([created.id, ...[second.id, third.id].sort()]);
    for (const item of listed) expect(item.key).toBeUndefined();
    expect(listed[1].expires_at ?? listed[2].expires_at).toBe(seconds(h) + 3600);
    expect(await list(h, (await h.createUser()).id)).toEqual([]);
  }, 30_000);

  test('an unknown user is 404 before a bad body; a disabled user is USER_DISABLED after a bad body', async () => {
    const { h, user } = await setup();
    expectError(await createRaw(h, 'nosuchuser', { name: '' }), 404, 'NOT_FOUND');
    expectError(await h.call('GET', '/users/nosuchuser/api-keys'), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', '/users/nosuchuser/api-keys'), 404, 'NOT_FOUND');
    await h.call('POST', `/users/${user.id}/disable`, { body: {} });
    expectError(await createRaw(h, user.id, { name: '' }), 400, 'INVALID_DATA');
    expectError(await createRaw(h, user.id, { name: 'ok' }), 400, 'USER_DISABLED');
    expect(await list(h, user.id)).toEqual([]);
    await h.call('POST', `/users/${user.id}/enable`);
    await createKey(h, user.id);
  }, 30_000);

  test('bad input is INVALID_DATA and changes nothing', async () => {
    const { h, user } = await setup();
    const now = seconds(h);
    const bodies: unknown[] = [
      {}, { name: null }, { name: 7 }, { name: '' }, { name: 'x'.repeat(65) }, { name: '😀'.repeat(65) }, { name: 'tab\there' },
      { name: 'nul\u0000' }, { name: 'line\nbreak' }, { name: 'lone \ud800' },
      { name: 'n', scopes: 'repo' }, { name: 'n', scopes: [''] }, { name: 'n', scopes: ['Repo'] }, { name: 'n', scopes: ['a b'] },
      { name: 'n', scopes: ['repo,read'] }, { name: 'n', scopes: ['é'] }, { name: 'n', scopes: ['x'.repeat(65)] }, { name: 'n', scopes: [1] },
      { name: 'n', scopes: ['a', 'a'] }, { name: 'n', scopes: Array.from({ length: 33 }, (_, i) => `s${i}`) },
      { name: 'n', expires_at: now }, { name: 'n', expires_at: now - 1 }, { name: 'n', expires_at: now + 11 * 365 * 86400 },
      { name: 'n', expires_at: now + 315_576_001 }, { name: 'n', expires_at: now + 10.5 }, { name: 'n', expires_at: String(now + 60) },
      [], 'name', null,
    ];
    const before = await snapshot(h);
    for (const body of bodies) {
      const res = await createRaw(h, user.id, body);
      expect({ body, status: res.status, json: res.json }).toEqual({ body, status: 400, json: { error: 'INVALID_DATA' } });
    }
    expect(await snapshot(h)).toEqual(before);
    // The bounds themselves are accepted.
    await createKey(h, user.id, { name: 'x'.repeat(64), scopes: Array.from({ length: 32 }, (_, i) => `s${i}:${'y'.repeat(60)}`.slice(0, 64)), expires_at: now + 315_576_000 });
    await createKey(h, user.id, { name: '😀'.repeat(64), expires_at: now + 1 });
  }, 30_000);

  test('at most 100 keys a user: the 101st is NOT_ALLOWED, and a deletion makes room', async () => {
    const { h, user } = await setup();
    for (let i = 0; i < 100; i++) await createKey(h, user.id, { name: `key ${i}` });
    expectError(await createRaw(h, user.id, { name: 'one too many' }), 400, 'NOT_ALLOWED');
    expect(await list(h, user.id)).toHaveLength(100);
    const [oldest] = await list(h, user.id);
    expect((await h.call('DELETE', `/users/${user.id}/api-keys/${oldest.id}`)).status).toBe(204);
    await createKey(h, user.id, { name: 'room again' });
    // Another user's keys do not count.
    await createKey(h, (await h.createUser()).id);
  }, 60_000);
});

describe('verifying keys', () => {
  test('a good key answers the key and its user, with the scopes asked for', async () => {
    const { h, user } = await setup();
    const created = await createKey(h, user.id, { scopes: ['repo:read', 'repo:write'] });
    const { key, ...view } = created;
    for (const scopes of [undefined, [], ['repo:read'], ['repo:write', 'repo:read']]) {
      const res = await verify(h, key, scopes);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ api_key: { ...view, last_used_at: seconds(h) }, user: (await h.call('GET', `/users/${user.id}`)).json });
    }
    expectError(await verify(h, key, ['repo:admin']), 400, 'INSUFFICIENT_SCOPE');
    expectError(await verify(h, key, ['repo:read', 'admin']), 400, 'INSUFFICIENT_SCOPE');
    const none = await createKey(h, user.id, { name: 'no scopes' });
    expect((await verify(h, none.key)).status).toBe(200);
    expectError(await verify(h, none.key, ['repo:read']), 400, 'INSUFFICIENT_SCOPE');
  }, 30_000);

  test('anything but an issued, live key is INVALID_API_KEY', async () => {
    const { h, user } = await setup();
    const { key, id } = await createKey(h, user.id);
    const malformed = [
      '', 'gh_', key.replace('gh_', 'gk_'), key.replace('gh_', 'GH_'), ` ${key}`, `${key} `, `${key}A`, key.slice(0, -1),
      key.slice(3), key.replace(/_/g, '-'), `gh_${id.toUpperCase()}${key.slice(27)}`, `gh_${id.replace(/.$/, 'l')}${key.slice(27)}`,
      `${key.slice(0, 28)}${key.slice(29)}=`, `${key.slice(0, 30)}+${key.slice(31)}`, `${key.slice(0, -1)}B`, 'x'.repeat(71), key + key,
    ];
    for (const bad of malformed) expectError(await verify(h, bad), 400, 'INVALID_API_KEY');
    // Every single flipped character of the id or the secret.
    for (let i = 3; i < key.length; i++) {
      if (i === 27) continue;
      const res = await verify(h, flipped(key, i));
      expect({ i, status: res.status, json: res.json }).toEqual({ i, status: 400, json: { error: 'INVALID_API_KEY' } });
    }
    // The key itself still works, and had no last_used_at from all that.
    expect((await rowOf(h, 'apiKeys', { id }))!.lastUsedAt).toBeNull();
    expect((await verify(h, key)).status).toBe(200);
  }, 30_000);

  test('a malformed key is refused without reading the store; a well-formed one costs one lookup', async () => {
    const { h, user } = await setup();
    const { key } = await createKey(h, user.id);
    const other = await createKey(h, (await h.createUser()).id);
    expect((await h.call('DELETE', `/users/${other.user_id}/api-keys/${other.id}`)).status).toBe(204);
    const calls: string[] = [];
    for (const instance of h.instances) {
      const store = instance.stores.apiKeys as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const name of ['findWithOwner', 'recordUse', 'find', 'listOf']) {
        const original = store[name]!;
        store[name] = (...args: unknown[]) => {
          calls.push(name);
          return original.apply(store, args);
        };
      }
    }
    for (const bad of ['gh_nope', key.replace('gh_', 'xx_'), `${key.slice(0, -1)}!`, key.slice(0, 40)]) {
      expectError(await verify(h, bad), 400, 'INVALID_API_KEY');
    }
    expect(calls).toEqual([]);
    // Another user's deleted key's id, with this key's secret; then a flipped secret.
    expectError(await verify(h, `gh_${other.id}${key.slice(27)}`), 400, 'INVALID_API_KEY');
    expectError(await verify(h, flipped(key, 40)), 400, 'INVALID_API_KEY');
    expect(calls).toEqual(['findWithOwner', 'findWithOwner']);
  }, 30_000);

  test('expiry is read-time: API_KEY_EXPIRED from expires_at on, before the scope and the user state', async () => {
    const { h, user } = await setup();
    const { key } = await createKey(h, user.id, { expires_at: seconds(h) + 60, scopes: ['a'] });
    h.advance(59_000);
    expect((await verify(h, key)).status).toBe(200);
    h.advance(1000);
    expectError(await verify(h, key), 400, 'API_KEY_EXPIRED');
    expectError(await verify(h, key, ['b']), 400, 'API_KEY_EXPIRED');
    await h.call('POST', `/users/${user.id}/disable`, { body: {} });
    expectError(await verify(h, key), 400, 'API_KEY_EXPIRED');
    expect((await list(h, user.id)).map((k: Created) => k.expires_at)).toEqual([seconds(h)]);
  }, 30_000);

  test("the user in the answer is the user GET /users/{id} shows, with every field away from its default", async () => {
    const h = passkeyHarness();
    const user = await h.createUser({ email: 'grace@example.com' });
    const { key } = await createKey(h, user.id);
    const requested = await h.call('POST', `/users/${user.id}/email-verification-request`);
    expect((await h.call('POST', `/users/${user.id}/verify-email`, { body: { code: requested.json.code } })).status).toBe(204);
    const totpKey = Buffer.alloc(20, 7).toString('base64');
    const code = generateTotpCode(parseTotpKey(totpKey)!, h.now());
    expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: totpKey, code } })).status).toBe(200);
    await registered(h, user.id, softAuthenticator());
    await registered(h, user.id, softAuthenticator());
    const shown = (await h.call('GET', `/users/${user.id}`)).json;
    expect(shown).toMatchObject({ email: 'grace@example.com', email_verified: true, registered_totp: true, passkey_count: 2, disabled: false });
    const res = await verify(h, key);
    expect(res.status).toBe(200);
    expect(res.json.user).toEqual(shown);
  }, 30_000);

  test("a disabled user's keys answer USER_DISABLED, last, and work again once enabled", async () => {
    const { h, user } = await setup();
    const { key } = await createKey(h, user.id, { scopes: ['a'] });
    await h.call('POST', `/users/${user.id}/disable`, { body: { until: seconds(h) + 600 } });
    expectError(await verify(h, key), 400, 'USER_DISABLED');
    expectError(await verify(h, key, ['b']), 400, 'INSUFFICIENT_SCOPE');
    expectError(await verify(h, flipped(key, 50)), 400, 'INVALID_API_KEY');
    h.advance(600_000);
    const res = await verify(h, key);
    expect(res.status).toBe(200);
    expect(res.json.user.disabled).toBe(false);
  }, 30_000);

  test('bad bodies are INVALID_DATA', async () => {
    const { h, user } = await setup();
    const { key } = await createKey(h, user.id);
    for (const body of [{}, { key: null }, { key: 7 }, { key: [key] }, { key, scopes: 'a' }, { key, scopes: ['A'] }, { key, scopes: [''] }, { key, scopes: ['a', 'a'] }, { key, scopes: Array.from({ length: 33 }, (_, i) => `s${i}`) }]) {
      const res = await h.call('POST', '/verify-api-key', { body });
      expect({ body, status: res.status, json: res.json }).toEqual({ body, status: 400, json: { error: 'INVALID_DATA' } });
    }
    expect((await rowOf(h, 'apiKeys', { userId: user.id }))!.lastUsedAt).toBeNull();
  }, 30_000);

  test('last_used_at is written at most once a minute per key, also by parallel verifies', async () => {
    const { h, user } = await setup();
    const { key, id } = await createKey(h, user.id);
    const created = seconds(h);
    let writes = 0;
    for (const instance of h.instances) {
      const store = instance.stores.apiKeys;
      const recordUse = store.recordUse.bind(store);
      store.recordUse = async (...args) => {
        const wrote = await recordUse(...args);
        if (wrote) writes++;
        return wrote;
      };
    }
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(h, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(writes).toBe(1);
    expect((await rowOf(h, 'apiKeys', { id }))!.lastUsedAt).toBe(created);
    h.advance(59_000);
    expect((await verify(h, key)).json.api_key.last_used_at).toBe(created);
    expect(writes).toBe(1);
    h.advance(1000);
    expect((await verify(h, key)).json.api_key.last_used_at).toBe(created + 60);
    expect(writes).toBe(2);
    expect((await rowOf(h, 'apiKeys', { id }))!.lastUsedAt).toBe(created + 60);
    expect((await list(h, user.id))[0].last_used_at).toBe(created + 60);
    // Refused verifies write nothing.
    h.advance(MINUTE);
    expectError(await verify(h, key, ['x']), 400, 'INSUFFICIENT_SCOPE');
    expect(writes).toBe(2);
  }, 30_000);
});

describe('deleting keys', () => {
  test('one key, then all of them: 204, one api_key.deleted per key, and they stop verifying', async () => {
    const { h, user } = await setup();
    const [a, b, c] = [await createKey(h, user.id), await createKey(h, user.id), await createKey(h, user.id)];
    const other = await h.createUser();
    const theirs = await createKey(h, other.id);
    expectError(await h.call('DELETE', `/users/${other.id}/api-keys/${a.id}`), 404, 'NOT_FOUND');
    expectError(await h.call('DELETE', `/users/${user.id}/api-keys/nosuchkey`), 404, 'NOT_FOUND');
    const one = await eventsDuring(h, async () => expect((await h.call('DELETE', `/users/${user.id}/api-keys/${a.id}`)).status).toBe(204));
    expect(summary(one)).toEqual([['api_key.deleted', user.id, null]]);
    expectError(await verify(h, a.key), 400, 'INVALID_API_KEY');
    expectError(await h.call('DELETE', `/users/${user.id}/api-keys/${a.id}`), 404, 'NOT_FOUND');
    const all = await eventsDuring(h, async () => expect((await h.call('DELETE', `/users/${user.id}/api-keys`)).status).toBe(204));
    expect(summary(all)).toEqual([['api_key.deleted', user.id, null], ['api_key.deleted', user.id, null]]);
    for (const key of [b.key, c.key]) expectError(await verify(h, key), 400, 'INVALID_API_KEY');
    expect(await list(h, user.id)).toEqual([]);
    expect(summary(await eventsDuring(h, async () => expect((await h.call('DELETE', `/users/${user.id}/api-keys`)).status).toBe(204)))).toEqual([]);
    expect((await verify(h, theirs.key)).status).toBe(200);
  }, 30_000);

  test("deleting the user deletes its keys", async () => {
    const { h, user } = await setup();
    const { key } = await createKey(h, user.id);
    expect((await h.call('DELETE', `/users/${user.id}`)).status).toBe(204);
    expect(await rowsOf(h, 'apiKeys')).toEqual([]);
    expectError(await verify(h, key), 400, 'INVALID_API_KEY');
  }, 30_000);
});

test('/metrics counts verifies by result', async () => {
  const { h, user } = await setup();
  const { key } = await createKey(h, user.id, { expires_at: seconds(h) + 60 });
  await verify(h, key);
  await verify(h, key);
  await verify(h, 'nope');
  await verify(h, key, ['x']);
  h.advance(MINUTE);
  await verify(h, key);
  const totals: Record<string, number> = {};
  for (const text of await h.callEach('GET', '/metrics')) {
    for (const sample of parseSamples(text).filter((s) => s.name === 'gatehouse_api_key_verifications_total')) {
      totals[sample.labels.result!] = (totals[sample.labels.result!] ?? 0) + sample.value;
    }
  }
  expect(totals).toEqual({ valid: 2, invalid: 1, expired: 1, insufficient_scope: 1, user_disabled: 0 });
});
