import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AWAITING_MIGRATION } from '../src/password-migration/model';
import { isCurrentArgon2id } from '../src/hashing/formats';
import { generateId } from '../src/security/random';
import { unguessableRecoveryCodeHash } from '../src/security/random';
import { eventsDuring, expectNoneOf, storedEvents, summary, tableTexts } from './support/events';
import { createHarness, expectError, type Harness, type HarnessOptions } from './support/harness';
import { migrationHookOfThisFile } from './support/migration-hook';
import { parseSamples, sumOf } from './support/prom-text';
import { rowOf } from './support/rows';
import { REPO_ROOT } from './support/server-process';

// API.md §19 through the HTTP surface, with the hook a process of its own (test/support/migration-hook-server.ts).
const OLD = 'the old system knew this one';
const users = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`user${i}@example.com`, `${OLD} ${i}`]));
const hook = migrationHookOfThisFile(users);
let next = 0;

/** A harness whose hook is the process above; its clock starts now, so the signatures' timestamps are fresh. */
async function migrating(options: HarnessOptions = {}) {
  const started = await hook();
  return createHarness({ startMs: Date.now(), passwordMigration: { target: started.target }, ...options });
}

/** A user as `gatehouse import` writes one from `"password_hash": null, "migrate_password": true`. */
async function awaitingUser(h: Harness) {
  await h.ready;
  const n = next++;
  const user = {
    id: generateId(),
    createdAt: Math.floor(h.now() / 1000),
    email: `user${n}@example.com`,
    emailVerified: true,
    passwordHash: AWAITING_MIGRATION,
    recoveryCodeHash: unguessableRecoveryCodeHash(),
    disabled: false,
    disabledUntil: null,
  };
  expect(await h.stores.users.insert(user, [])).toBe(true);
  return { id: user.id, email: user.email, password: users[user.email]! };
}

const signIn = (h: Harness, email: string, password: string, clientIp?: string) =>
  h.call('POST', '/authenticate/password', { body: { email, password, ...(clientIp === undefined ? {} : { client_ip: clientIp }) } });

const storedHash = async (h: Harness, id: string): Promise<string> => (await rowOf(h, 'users', { id }))!.passwordHash;

/** Every instance's metrics, as samples (the counter is per process, the gauge the same on each). */
const metricsOf = async (h: Harness) => (await h.callEach('GET', '/metrics')).map(parseSamples);
const hookCalls = async (h: Harness, outcome: string) => (await metricsOf(h)).reduce((sum, samples) => sum + sumOf(samples, 'gatehouse_password_migration_hook_calls_total', { outcome }), 0);
const awaiting = async (h: Harness) => sumOf((await metricsOf(h))[0]!, 'gatehouse_users_awaiting_password_migration');

/** The hook's requests for one user. */
const requestsFor = async (userId: string) => (await (await hook()).requests()).filter((r) => r.body.user_id === userId);

describe('a match takes the password over', () => {
  test('authenticate: 200, the hook asked once with exactly {user_id, email, password}, signed; argon2id stored; one password.migrated', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const other = await awaitingUser(h);
    expect(await awaiting(h)).toBe(2);
    const events = await eventsDuring(h, async () => {
      const res = await signIn(h, user.email.toUpperCase(), user.password, '203.0.113.9');
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ id: user.id, email: user.email });
      expect(Object.keys(res.json)).not.toContain('password_hash');
    });
    expect(summary(events)).toEqual([['password.migrated', user.id, '203.0.113.9']]);
    const [request, ...more] = await requestsFor(user.id);
    expect(more).toEqual([]);
    expect(request!.verified).toBe(true);
    expect(request!.body).toEqual({ user_id: user.id, email: user.email, password: user.password });
    expect(request!.headers['webhook-signature']).toMatch(/^v1,/);
    const hash = await storedHash(h, user.id);
    expect(isCurrentArgon2id(hash)).toBe(true);
    expect(await Bun.password.verify(user.password, hash)).toBe(true);
    // From now on Gatehouse checks the password itself: the hook is not asked again.
    expect((await signIn(h, user.email, user.password)).status).toBe(200);
    expectError(await signIn(h, user.email, 'a wrong password, now judged locally'), 400, 'INCORRECT_PASSWORD');
    expect(await requestsFor(user.id)).toHaveLength(1);
    expect(await hookCalls(h, 'match')).toBe(1);
    expect(await awaiting(h)).toBe(1);
    expect(await storedHash(h, other.id)).toBe(AWAITING_MIGRATION);
  });

  test('verify-password: 204 and migrated', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const events = await eventsDuring(h, async () => {
      expect((await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: user.password } })).status).toBe(204);
    });
    expect(summary(events)).toEqual([['password.migrated', user.id, null]]);
    expect(await Bun.password.verify(user.password, await storedHash(h, user.id))).toBe(true);
  });

  test("update-password: the hook judges the current password, then the new one is stored", async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const fresh = 'a new passphrase for the new system';
    const events = await eventsDuring(h, async () => {
      const res = await h.call('POST', `/users/${user.id}/update-password`, { body: { password: user.password, new_password: fresh } });
      expect(res.status).toBe(204);
    });
    expect(summary(events).map(([type]) => type)).toEqual(['password.migrated', 'password.updated']);
    expect(await Bun.password.verify(fresh, await storedHash(h, user.id))).toBe(true);
    expect((await signIn(h, user.email, fresh)).status).toBe(200);
  });

  test('a disabled user: migrated (the old system said yes), answered USER_DISABLED', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    expect((await h.call('POST', `/users/${user.id}/disable`, { body: {} })).status).toBe(200);
    expectError(await signIn(h, user.email, user.password), 400, 'USER_DISABLED');
    expect(await Bun.password.verify(user.password, await storedHash(h, user.id))).toBe(true);
  });
});

describe('no match', () => {
  test('INCORRECT_PASSWORD counted as any wrong password: the 5th blocks the address, the 6th never reaches the hook', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const ip = '198.51.100.20';
    const events = await eventsDuring(h, async () => {
      for (let i = 0; i < 5; i++) expectError(await signIn(h, user.email, `not the password ${i}`, ip), 400, 'INCORRECT_PASSWORD');
    });
    expect(summary(events).map(([type]) => type)).toEqual([...Array(5).fill('password.incorrect'), 'address.blocked']);
    expectError(await signIn(h, user.email, user.password, ip), 400, 'TOO_MANY_REQUESTS');
    expect(await requestsFor(user.id)).toHaveLength(5);
    expect(await hookCalls(h, 'no_match')).toBe(5);
    expect(await storedHash(h, user.id)).toBe(AWAITING_MIGRATION);
  });
});

describe('no usable answer: 503 UNAVAILABLE, nothing counted, still awaiting', () => {
  const cases = [
    ['huge-', 'bad_answer', 'an answer over 4 KiB'],
    ['status500-', 'bad_status', 'a 500'],
    ['redirect-', 'bad_status', 'a redirect (not followed; its target would say match)'],
    ['nonjson-', 'bad_answer', 'a body that is not JSON'],
    ['yes-', 'bad_answer', '{"match": "yes"}'],
  ] as const;
  test.each(cases)('%s: %s (%s)', async (prefix, outcome) => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const ip = '198.51.100.30';
    const events = await eventsDuring(h, async () => {
      // More than the login block allows: none of them counts. (10 s apart: the address's bucket refills.)
      for (let i = 0; i < 6; i++) {
        expectError(await signIn(h, user.email, `${prefix}${i} some password`, ip), 503, 'UNAVAILABLE');
        h.advance(10_000);
      }
    });
    expect(events).toEqual([]);
    expect(await hookCalls(h, outcome)).toBe(6);
    expect(await storedHash(h, user.id)).toBe(AWAITING_MIGRATION);
    expect(h.logs.filter((line) => line.outcome === outcome)).toHaveLength(h.instances.length); // once a minute, per process
    // The address was not blocked: the right password still signs in.
    expect((await signIn(h, user.email, user.password, ip)).status).toBe(200);
  });

  test('a hook slower than 5 s: UNAVAILABLE after the real 5 s timeout (it would have said match at 6 s)', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const started = performance.now();
    expectError(await signIn(h, user.email, 'slow- some password'), 503, 'UNAVAILABLE');
    expect(performance.now() - started).toBeGreaterThanOrEqual(4_900);
    expect(await hookCalls(h, 'timeout')).toBe(1);
    expect(await storedHash(h, user.id)).toBe(AWAITING_MIGRATION);
  }, 20_000);

  test('a hook that is not there: UNAVAILABLE (unreachable)', async () => {
    const started = await hook();
    const h = createHarness({ startMs: Date.now(), passwordMigration: { target: { ...started.target, url: 'http://127.0.0.1:9/nothing-listens' } } });
    const user = await awaitingUser(h);
    expectError(await signIn(h, user.email, user.password), 503, 'UNAVAILABLE');
    expect(await hookCalls(h, 'unreachable')).toBe(1);
  });
});

describe('no hook configured', () => {
  test('INCORRECT_PASSWORD, counted; an error line at most once a minute', async () => {
    const h = createHarness();
    const user = await awaitingUser(h);
    const events = await eventsDuring(h, async () => {
      for (let i = 0; i < 3; i++) expectError(await signIn(h, user.email, user.password), 400, 'INCORRECT_PASSWORD');
    });
    expect(summary(events).map(([type]) => type)).toEqual(Array(3).fill('password.incorrect'));
    const lines = () => h.logs.filter((line) => line.level === 'error' && String(line.message).includes('--password-migration-url'));
    expect(lines()).toHaveLength(h.instances.length); // each instance says it once
    h.advance(61_000);
    for (let i = 0; i < h.instances.length; i++) expectError(await signIn(h, user.email, user.password), 400, 'INCORRECT_PASSWORD');
    expect(lines()).toHaveLength(2 * h.instances.length);
    expect(lines().at(-1)!.repeated).toBeGreaterThanOrEqual(1);
    expect(await storedHash(h, user.id)).toBe(AWAITING_MIGRATION);
  });
});

describe('the wait ends', () => {
  test('a password reset ends it: the new password signs in without the hook', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const request = (await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} })).json;
    const fresh = 'chosen at the reset, not the old one';
    expect((await h.call('POST', '/reset-password', { body: { request_id: request.id, password: fresh } })).status).toBe(204);
    expect(await awaiting(h)).toBe(0);
    expect((await signIn(h, user.email, fresh)).status).toBe(200);
    expectError(await signIn(h, user.email, user.password), 400, 'INCORRECT_PASSWORD');
    expect(await requestsFor(user.id)).toEqual([]);
  });

  test('parallel correct sign-ins all succeed, one hash stored, one event; a wrong one racing them counts once', async () => {
    const h = await migrating();
    for (let round = 0; round < 3; round++) {
      const user = await awaitingUser(h);
      const before = (await storedEvents(h)).length;
      // Each from its own address, so the login serialisation of one address does not order them.
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, (_, i) => signIn(h, user.email, user.password, `192.0.2.${i + 1}`)),
        signIn(h, user.email, 'wrong, racing the right ones', '192.0.2.100'),
      ]);
      expect({ round, statuses: answers.map((a) => a.status) }).toEqual({ round, statuses: [...Array(8).fill(200), 400] });
      const events = (await storedEvents(h)).slice(before);
      expect({ round, types: events.map((e) => e.type).sort() }).toEqual({ round, types: ['password.incorrect', 'password.migrated'] });
      expect(await Bun.password.verify(user.password, await storedHash(h, user.id))).toBe(true);
    }
  });
});

describe('the password stays secret', () => {
  test('never in a log line, an event, a metric, an error answer or the webhook outbox', async () => {
    const h = await migrating();
    const user = await awaitingUser(h);
    const passwords = [user.password, 'huge- a secret password', 'status500- another secret', 'slow-', 'not the right secret'];
    const bodies: string[] = [];
    for (const password of [passwords[1]!, passwords[2]!, passwords[4]!, user.password]) bodies.push((await signIn(h, user.email, password)).text);
    const metrics = await h.callEach('GET', '/metrics');
    const events = await h.call('GET', '/events');
    expectNoneOf([...h.logs.map((line) => JSON.stringify(line)), ...bodies, ...metrics, events.text, ...(await tableTexts(h, ['events', 'users']))], passwords);
  });

  test('POST /users refuses the marker as a password_hash', async () => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body: { password_hash: AWAITING_MIGRATION } }), 400, 'UNSUPPORTED_PASSWORD_HASH');
  });

  test("the partial index's predicate is the marker, on both schemas", () => {
    for (const file of ['src/db/schema-users.ts', 'src/db/pg-schema.ts', 'drizzle/0008_users_awaiting_password_migration.sql', 'drizzle/pg/0008_users_awaiting_password_migration.sql']) {
      expect({ file, predicate: readFileSync(join(REPO_ROOT, file), 'utf8').includes(`password_hash = '${AWAITING_MIGRATION}'`) }).toEqual({ file, predicate: true });
    }
  });
});
