// Issue 22 (and issue 24's first bullet): every rule that counts or consumes, under ≥ 20 parallel
// requests alternating between TWO REAL SERVER PROCESSES on one PostgreSQL + Redis, each scenario
// repeated in every run: exact counts, and never a 500 or 503 (a deadlock, or a lock wait past the
// 1.8 s deadline, would show as one of those).
import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { generateId } from '../src/security/random';
import { softAuthenticator, ORIGIN, RP } from './support/passkeys';
import type { SoftAuthenticator } from './support/soft-authenticator';
import { expectTally, ok, tally, twoProcessesForThisFile, type Answer, type TwoProcesses } from './support/two-processes';

const processes = await twoProcessesForThisFile('contention across two server processes', {
  extraArgs: ['--webauthn-rp-id', RP.id, '--webauthn-origin', ORIGIN],
});
const REPEATS = 10;
const PARALLEL = 20;
const SCENARIO_MS = 240_000;
const RECOVERY_CODE = 'CNTNTNRCVRYC2345';
const TOTP_KEY = Buffer.from('contention-totp-key!').toString('base64');
const totpCode = () => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(TOTP_KEY, 'base64')).buffer }) });
// One argon2id hash of the recovery code, also used as every seeded user's password hash (the
// scenarios never check a password): seeding through SQL keeps hashing for the requests under test.
const knownHash = Bun.password.hash(RECOVERY_CODE, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });

const pair = (): TwoProcesses => processes.pair();

async function seedUsers(count: number, options: { email?: (i: number) => string; totp?: boolean } = {}): Promise<string[]> {
  const hash = await knownHash;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: generateId(),
    created_at: 1_700_000_000,
    email: options.email?.(i) ?? null,
    email_verified: false,
    password_hash: hash,
    recovery_code_hash: hash,
  }));
  await pair().sql`insert into users ${pair().sql(rows)}`;
  if (options.totp) {
    const credentials = rows.map((row) => ({ user_id: row.id, created_at: 1_700_000_000, key: TOTP_KEY, last_used_step: 0 }));
    await pair().sql`insert into totp_credentials ${pair().sql(credentials)}`;
  }
  return rows.map((row) => row.id);
}

const unique = () => generateId().slice(0, 10);

describe.skipIf(processes.skip)(`two server processes, ${PARALLEL} parallel requests alternating, ${REPEATS} rounds each`, () => {
  test('POST /reset-password on one request: exactly one 204', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1)) as [string];
      const request = await ok(await pair().call(round, 'POST', `/users/${user}/password-reset-requests`), 'reset request');
      const answers = await pair().parallel(PARALLEL, (n) => ({ method: 'POST', path: '/reset-password', body: { request_id: request.id, password: `contention passphrase ${n}` } }));
      expectTally(round, answers, { '204': 1, '400 INVALID_REQUEST': PARALLEL - 1 });
    }
  }, SCENARIO_MS);

  test("POST /reset-password on three of one user's requests: exactly one 204", async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1)) as [string];
      const requests: { id: string }[] = [];
      for (let i = 0; i < 3; i++) requests.push(await ok(await pair().call(i, 'POST', `/users/${user}/password-reset-requests`), 'reset request'));
      // 21 requests: each reset request reaches both processes.
      const answers = await pair().parallel(21, (n) => ({ method: 'POST', path: '/reset-password', body: { request_id: requests[n % 3]!.id, password: `contention passphrase ${n}` } }));
      expectTally(round, answers, { '204': 1, '400 INVALID_REQUEST': 20 });
    }
  }, SCENARIO_MS);

  test('wrong codes on one reset request: exactly 5 INCORRECT_CODE, the 5th invalidates', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1)) as [string];
      const request = await ok(await pair().call(round, 'POST', `/users/${user}/password-reset-requests`), 'reset request');
      const wrong = request.code === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA';
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/password-reset-requests/${request.id}/verify-email`, body: { code: wrong } }));
      expectTally(round, answers, { '400 INCORRECT_CODE': 5, '404 NOT_FOUND': PARALLEL - 5 });
    }
  }, SCENARIO_MS);

  test('POST /users/{id}/verify-email with the right code: exactly one 204', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1, { email: () => `verify-${unique()}@example.com` })) as [string];
      const request = await ok(await pair().call(round, 'POST', `/users/${user}/email-verification-request`), 'verification request');
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/users/${user}/verify-email`, body: { code: request.code } }));
      expectTally(round, answers, { '204': 1, '400 NOT_ALLOWED': PARALLEL - 1 });
    }
  }, SCENARIO_MS);

  test('POST /verify-new-email: one request redeemed once; wrong codes count exactly 5', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user, other] = (await seedUsers(2)) as [string, string];
      const request = await ok(await pair().call(round, 'POST', `/users/${user}/email-update-requests`, { email: `new-${unique()}@example.com` }), 'update request');
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: '/verify-new-email', body: { request_id: request.id, code: request.code } }));
      expectTally(round, answers, { '200': 1, '400 INVALID_REQUEST': PARALLEL - 1 });
      const guessed = await ok(await pair().call(round, 'POST', `/users/${other}/email-update-requests`, { email: `guess-${unique()}@example.com` }), 'update request');
      const wrong = guessed.code === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA';
      const guesses = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: '/verify-new-email', body: { request_id: guessed.id, code: wrong } }));
      expectTally(round, guesses, { '400 INCORRECT_CODE': 5, '400 INVALID_REQUEST': PARALLEL - 5 });
    }
  }, SCENARIO_MS);

  test('two users claim one address through /verify-new-email: exactly one 200', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const users = await seedUsers(2);
      const address = `claimed-${unique()}@example.com`;
      const requests: { id: string; code: string }[] = [];
      for (const [i, user] of users.entries()) requests.push(await ok(await pair().call(i, 'POST', `/users/${user}/email-update-requests`, { email: address }), 'update request'));
      // n → request (n >> 1) % 2, process n % 2: each request reaches both processes.
      const answers = await pair().parallel(PARALLEL, (n) => {
        const request = requests[(n >> 1) % 2]!;
        return { method: 'POST', path: '/verify-new-email', body: { request_id: request.id, code: request.code } };
      });
      expectTally(round, answers, { '200': 1, '400 INVALID_REQUEST': PARALLEL - 1 });
      const holders = await pair().sql`select id from users where email = ${address}`;
      expect(holders.length).toBe(1);
    }
  }, SCENARIO_MS);

  test('POST /users/{id}/reset-2fa with the recovery code: exactly one 200', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1, { totp: true })) as [string];
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/users/${user}/reset-2fa`, body: { recovery_code: RECOVERY_CODE } }));
      const counts = tally(answers);
      expect({ round, ok: counts['200'] }).toEqual({ round, ok: 1 });
      // Losers that loaded the old hash find it changed (INCORRECT_CODE, uncounted); later ones count
      // as wrong codes until the 5th locks the check (TOO_MANY_REQUESTS).
      const losers = Object.keys(counts).filter((key) => key !== '200');
      expect({ round, losers: losers.filter((key) => key !== '400 INCORRECT_CODE' && key !== '400 TOO_MANY_REQUESTS') }).toEqual({ round, losers: [] });
      const credentials = await pair().sql`select user_id from totp_credentials where user_id = ${user}`;
      expect(credentials.length).toBe(0);
    }
  }, SCENARIO_MS);

  test('one TOTP code: accepted exactly once', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1, { totp: true })) as [string];
      const code = totpCode();
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/users/${user}/verify-2fa/totp`, body: { code } }));
      expectTally(round, answers, { '204': 1, '400 INCORRECT_CODE': PARALLEL - 1 });
    }
  }, SCENARIO_MS);

  test('passkey assertions with one sign counter on fresh challenges: exactly one 200', async () => {
    const [user] = (await seedUsers(1)) as [string];
    const authenticator: SoftAuthenticator = softAuthenticator();
    const options = await ok(await pair().call(0, 'POST', `/users/${user}/passkey-registration-options`), 'registration options');
    const response = await authenticator.register(options.options);
    await ok(await pair().call(1, 'POST', `/users/${user}/passkeys`, { challenge_id: options.challenge_id, response }), 'registration');
    for (let round = 0; round < REPEATS; round++) {
      const bodies: { challenge_id: string; response: unknown }[] = [];
      for (let n = 0; n < PARALLEL; n++) {
        const challenge = await ok(await pair().call(n, 'POST', '/passkey-authentication-options', {}), 'authentication options');
        bodies.push({ challenge_id: challenge.challenge_id, response: await authenticator.authenticate(challenge.options, { signCount: 100 * (round + 1) }) });
      }
      const answers = await pair().parallel(PARALLEL, (n) => ({ method: 'POST', path: '/authenticate/passkey', body: bodies[n] }));
      expectTally(round, answers, { '200': 1, '400 PASSKEY_VERIFICATION_FAILED': PARALLEL - 1 });
      const [stored] = await pair().sql`select counter from passkeys where user_id = ${user}`;
      expect(Number(stored.counter)).toBe(100 * (round + 1));
    }
  }, SCENARIO_MS);

  test('one credential id registered from many challenges of two users: exactly one 200', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const users = await seedUsers(2);
      const authenticator = softAuthenticator();
      const bodies: { user: string; body: unknown }[] = [];
      let credentialId: string | undefined;
      for (let n = 0; n < PARALLEL; n++) {
        const user = users[(n >> 1) % 2]!;
        const options = await ok(await pair().call(n, 'POST', `/users/${user}/passkey-registration-options`), 'registration options');
        const response = await authenticator.register(options.options, credentialId === undefined ? {} : { credentialId });
        credentialId ??= response.id;
        bodies.push({ user, body: { challenge_id: options.challenge_id, response } });
      }
      const answers = await pair().parallel(PARALLEL, (n) => ({ method: 'POST', path: `/users/${bodies[n]!.user}/passkeys`, body: bodies[n]!.body }));
      expectTally(round, answers, { '200': 1, '400 PASSKEY_ALREADY_REGISTERED': PARALLEL - 1 });
      const stored = await pair().sql`select id from passkeys where credential_id = ${credentialId!}`;
      expect(stored.length).toBe(1);
    }
  }, SCENARIO_MS);

  test('DELETE /users/{id}: exactly one 204, one user.deleted event', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const [user] = (await seedUsers(1)) as [string];
      // The user holds rows of every kind the delete cascades to.
      await ok(await pair().call(round, 'POST', `/users/${user}/password-reset-requests`), 'reset request');
      await pair().sql`insert into totp_credentials (user_id, created_at, key, last_used_step) values (${user}, 1, ${TOTP_KEY}, 0)`;
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'DELETE', path: `/users/${user}` }));
      expectTally(round, answers, { '204': 1, '404 NOT_FOUND': PARALLEL - 1 });
      const events = await pair().sql`select id from events where user_id = ${user} and type = 'user.deleted'`;
      expect(events.length).toBe(1);
    }
  }, SCENARIO_MS);

  test('a reader paging GET /events while 12 writers on both processes append ends with every event, in increasing order', async () => {
    const WRITERS = 12;
    const PER_WRITER = 20;
    for (let round = 0; round < REPEATS; round++) {
      const [{ start }] = await pair().sql`select coalesce(max(id), 0)::int as start from events`;
      const users = await seedUsers(WRITERS * PER_WRITER, { totp: true });
      let writing = true;
      const since = pair().mark();
      const writerAnswers: Answer[] = [];
      const writers = Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER; i++) {
          const user = users[w * PER_WRITER + i]!;
          // Two kinds of appending transaction: one that locks the user first, one that deletes it.
          const path = i % 2 === 0 ? `/users/${user}/totp-credential` : `/users/${user}`;
          writerAnswers.push(await pair().call(w + i, 'DELETE', path));
        }
      });
      const seen: number[] = [];
      const reader = (async () => {
        let after = start as number;
        for (let n = 0; ; n++) {
          const finished = !writing;
          const page = await pair().call(n, 'GET', `/events?after=${after}&limit=25`);
          expect(page.status).toBe(200);
          for (const event of page.json as { id: number }[]) seen.push(event.id);
          after = seen.at(-1) ?? after;
          // A full read after the writers finished, with nothing new: the reader has it all.
          if (finished && (page.json as unknown[]).length === 0) return;
        }
      })();
      await Promise.all(writers);
      writing = false;
      await reader;
      expectTally(round, writerAnswers, { '204': WRITERS * PER_WRITER }, await pair().servedSince(since, writerAnswers));
      const all = (await pair().sql`select id from events where id > ${start} order by id`).map((row: { id: string | number }) => Number(row.id));
      expect(all.length).toBe(WRITERS * PER_WRITER);
      expect(seen).toEqual(all);
    }
  }, SCENARIO_MS);
});
