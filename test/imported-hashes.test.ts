import { describe, expect, test } from 'bun:test';
import { AppError } from '../src/errors';
import { isCurrentArgon2id } from '../src/hashing/formats';
import { PasswordHasher } from '../src/hashing/password-hash';
import { createHarness, expectError, fakeBreachChecker, type Harness } from './support/harness';
import { updateRows } from './support/rows';
import { FIREBASE_EXAMPLE, PASSWORD, VECTORS, WRONG_PASSWORD } from './password-formats.vectors';

/** One vector per scheme keeps the argon2 work (a recovery code and a rehash per user) small. */
const ONE_PER_SCHEME = [
  ...[...new Map(VECTORS.map((vector) => [vector.scheme, vector])).values()].map((v) => ({ ...v, password: PASSWORD, wrong: WRONG_PASSWORD })),
  { scheme: 'firebase-scrypt', label: "Firebase's published example", hash: FIREBASE_EXAMPLE.hash, password: FIREBASE_EXAMPLE.password, wrong: 'user1passwore' },
];

const storedHash = async (h: Harness, id: string) => (await h.stores.users.find(id))!.passwordHash;

async function importUser(h: Harness, body: Record<string, unknown>) {
  const res = await h.call('POST', '/users', { body });
  if (res.status !== 200) throw new Error(`import failed: ${res.status} ${res.text}`);
  return res.json as { id: string; recovery_code: string; email: string | null };
}

const verify = (h: Harness, id: string, password: string) => h.call('POST', `/users/${id}/verify-password`, { body: { password } });

describe('POST /users with password_hash, one vector per format', () => {
  test.each(ONE_PER_SCHEME.map((v) => [`${v.scheme} (${v.label})`, v] as const))(
    '%s: imports, checks with its own algorithm, then moves to argon2id',
    async (_name, vector) => {
      const h = createHarness();
      const user = await importUser(h, { password_hash: vector.hash });
      expect(user.recovery_code).toMatch(/^[A-Z2-9]{16}$/);
      expect(await storedHash(h, user.id)).toBe(vector.hash);

      expectError(await verify(h, user.id, vector.wrong), 400, 'INCORRECT_PASSWORD');
      expect(await storedHash(h, user.id)).toBe(vector.hash);

      expect((await verify(h, user.id, vector.password)).status).toBe(204);
      const rehashed = await storedHash(h, user.id);
      expect(rehashed).not.toBe(vector.hash);
      expect(isCurrentArgon2id(rehashed)).toBe(true);

      expect((await verify(h, user.id, vector.password)).status).toBe(204);
      expect(await storedHash(h, user.id)).toBe(rehashed);
      expectError(await verify(h, user.id, vector.wrong), 400, 'INCORRECT_PASSWORD');
    },
  );

  test.each(ONE_PER_SCHEME.map((v) => [v.scheme, v] as const))('%s with its last character broken → UNSUPPORTED_PASSWORD_HASH', async (_name, vector) => {
    const h = createHarness();
    const broken = `${vector.hash.slice(0, -1)}\u0000`;
    expectError(await h.call('POST', '/users', { body: { password_hash: broken } }), 400, 'UNSUPPORTED_PASSWORD_HASH');
    expect((await h.call('GET', '/users')).json).toEqual([]);
  });
});

describe('POST /users with password_hash: body rules and order of checks', () => {
  test.each([
    ['', 'empty'],
    ['not a hash at all', 'free text'],
    ['$2b$04$tooShort', 'truncated bcrypt'],
    ['$argon2id$v=19$m=1048576,t=2,p=1$8l6rdW7Nudf63/ufc865tw$EpSF/WQ3FbCGCTs+mFAdmg', 'argon2 asking for 1 GiB'],
    ['$argon2id$v=19$m=16,t=49152,p=2$8l6rdW7Nudf63/ufc865tw$EpSF/WQ3FbCGCTs+mFAdmg', 'argon2 with 2 lanes and 49,152 passes (9 s a check)'],
    ['$2x$04$f6.WT/QSKTApLr87p2C7Te7XLydE9SGdjcmXQEZCrxkQK0dTPGmI2', 'bcrypt $2x$'],
  ])('%j (%s) → UNSUPPORTED_PASSWORD_HASH', async (hash) => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body: { password_hash: hash } }), 400, 'UNSUPPORTED_PASSWORD_HASH');
  });

  test.each([
    ['both password and password_hash', { password: PASSWORD, password_hash: VECTORS[0]!.hash }],
    ['neither', { email: 'a@example.com' }],
    ['password_hash as a number', { password_hash: 12 }],
    ['password_hash null', { password_hash: null }],
    ['an unknown format and a malformed email', { password_hash: 'nope', email: 'not-an-email' }],
  ])('%s → INVALID_DATA', async (_name, body) => {
    const h = createHarness();
    expectError(await h.call('POST', '/users', { body }), 400, 'INVALID_DATA');
  });

  test('no breach check for an imported hash (a breached password imports and logs in)', async () => {
    const asked: string[] = [];
    const breach = fakeBreachChecker();
    const h = createHarness({ breach: { isBreached: (password) => (asked.push(password), breach.isBreached(password)) } });
    // Unsalted hex MD5 of 'password123', a breached password.
    const user = await importUser(h, { password_hash: '482c811da5d5b4bc6d497ffa98491e38' });
    expect(asked).toEqual([]);
    expect((await verify(h, user.id, 'password123')).status).toBe(204);
    expect(asked).toEqual([]);
  });

  test('the address bucket is spent before the format is judged; the format before the email is', async () => {
    const h = createHarness();
    await importUser(h, { password_hash: VECTORS[0]!.hash, email: 'taken@example.com' });
    expectError(await h.call('POST', '/users', { body: { password_hash: 'nope', email: 'taken@example.com' } }), 400, 'UNSUPPORTED_PASSWORD_HASH');
    expectError(await h.call('POST', '/users', { body: { password_hash: VECTORS[1]!.hash, email: 'TAKEN@example.com' } }), 400, 'EMAIL_ALREADY_USED');
    for (let i = 0; i < 5; i++) await h.call('POST', '/users', { body: { password_hash: 'nope', client_ip: '198.51.100.1' } });
    expectError(await h.call('POST', '/users', { body: { password_hash: 'nope', client_ip: '198.51.100.1' } }), 400, 'TOO_MANY_REQUESTS');
  });
});

describe('rehash on use', () => {
  const bcrypt = VECTORS.find((v) => v.scheme === 'bcrypt')!.hash;

  test('authenticate/password rehashes a correct password and answers the user', async () => {
    const h = createHarness();
    const user = await importUser(h, { password_hash: bcrypt, email: 'imported@example.com' });
    const res = await h.call('POST', '/authenticate/password', { body: { email: 'imported@example.com', password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(user.id);
    expect(isCurrentArgon2id(await storedHash(h, user.id))).toBe(true);
  });

  test("update-password accepts the imported hash's password as the current one; the new one replaces it", async () => {
    const h = createHarness();
    const user = await importUser(h, { password_hash: bcrypt });
    const res = await h.call('POST', `/users/${user.id}/update-password`, { body: { password: PASSWORD, new_password: 'a new strong passphrase' } });
    expect(res.status).toBe(204);
    expect(isCurrentArgon2id(await storedHash(h, user.id))).toBe(true);
    expect((await verify(h, user.id, 'a new strong passphrase')).status).toBe(204);
    expectError(await verify(h, user.id, PASSWORD), 400, 'INCORRECT_PASSWORD');
  });

  test.each([
    ['without client_ip (checks run in parallel)', [undefined, undefined]],
    ['from two addresses', ['203.0.113.1', '203.0.113.2']],
  ])('two parallel correct logins %s: both succeed, exactly one rehash is stored', async (_name, addresses) => {
    const h = createHarness();
    const user = await importUser(h, { password_hash: bcrypt, email: 'race@example.com' });
    const attempts: { applied: boolean }[] = [];
    // With two instances each has its own stores; count the attempts of both.
    for (const { stores } of h.instances) {
      const replaceHash = stores.passwords.replaceHash;
      stores.passwords.replaceHash = async (...args) => {
        const applied = await replaceHash(...args);
        attempts.push({ applied });
        return applied;
      };
    }
    const login = (clientIp: string | undefined) =>
      h.call('POST', '/authenticate/password', { body: { email: 'race@example.com', password: PASSWORD, client_ip: clientIp } });
    const results = await Promise.all(addresses.map(login));
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(attempts.filter((a) => a.applied)).toHaveLength(1);
    // Both checked the imported hash before either stored, so both tried; the conditional statement let one through.
    expect(attempts).toHaveLength(2);
    expect(isCurrentArgon2id(await storedHash(h, user.id))).toBe(true);
    expect((await login(undefined)).status).toBe(200);
    expect(attempts).toHaveLength(2);
  });

  test('a stored hash in no known format is a wrong password, not an error', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await updateRows(h, 'users', { passwordHash: 'garbage' }, { id: user.id });
    expectError(await verify(h, user.id, PASSWORD), 400, 'INCORRECT_PASSWORD');
    expectError(await h.call('POST', `/users/${user.id}/reset-2fa`, { body: { recovery_code: 'AAAAAAAAAAAAAAAA' } }), 400, 'INCORRECT_CODE');
  });

  test('a full hashing queue skips the rehash but not the login', async () => {
    const hasher = new PasswordHasher({ concurrency: 4, maxQueue: 1000 });
    const h = createHarness({ hasher });
    const user = await importUser(h, { password_hash: bcrypt });
    const hash = hasher.hash.bind(hasher);
    let refused = 0;
    hasher.hash = async () => {
      refused++;
      throw new AppError('SERVER_BUSY', 1);
    };
    expect((await verify(h, user.id, PASSWORD)).status).toBe(204);
    expect(refused).toBe(1);
    expect(await storedHash(h, user.id)).toBe(bcrypt);
    hasher.hash = hash;
    expect((await verify(h, user.id, PASSWORD)).status).toBe(204);
    expect(isCurrentArgon2id(await storedHash(h, user.id))).toBe(true);
  });
});
