// API.md §14–§15 across TWO REAL SERVER PROCESSES on one PostgreSQL + Redis: the state that refuses a
// write is read in the write's own transaction, and the first proof of an address revokes what nobody
// proved before any attacker's check can slip past it.
import { describe, expect, test } from 'bun:test';
import type { SQL } from 'bun';
import { generateId } from '../src/security/random';
import { ORIGIN, RP, softAuthenticator } from './support/passkeys';
import { encodeTotpKey, generateTotpCode } from '../src/security/totp';
import { ok, tally, twoProcessesForThisFile, type Answer, type TwoProcesses } from './support/two-processes';

const processes = await twoProcessesForThisFile('account states at the write, across two server processes', {
  extraArgs: ['--webauthn-rp-id', RP.id, '--webauthn-origin', ORIGIN],
});
const pair = (): TwoProcesses => processes.pair();
const ROUNDS = 10;
const SCENARIO_MS = 240_000;
const PASSWORD = 'contention password 0123';
const NEW_PASSWORD = 'a new contention password 4567';
const passwordHash = Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });

async function seedUser(verified: boolean): Promise<{ id: string; email: string }> {
  const user = { id: generateId(), email: `${generateId().slice(0, 12)}@example.com` };
  const hash = await passwordHash;
  await pair().sql`insert into users ${pair().sql({ ...user, created_at: 1_700_000_000, email_verified: verified, password_hash: hash, recovery_code_hash: hash })}`;
  return user;
}

const storedHash = async (userId: string) => (await pair().sql`select password_hash from users where id = ${userId}`)[0].password_hash as string;

/** Until a backend of this database waits for a lock: the request under test is queued behind the held row lock. */
async function untilSomeoneWaitsForALock(): Promise<void> {
  for (let i = 0; ; i++) {
    const [row] = await pair().sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    if (row.n > 0) return;
    if (i > 2_000) throw new Error('the request never waited for the held row lock');
    await Bun.sleep(5);
  }
}

/**
 * The interleaving made certain: the test's own connection locks the user's row; `send` starts a request
 * that has passed every check made before its write (the user is enabled then) and now waits for that
 * lock at its write; the same connection then commits a disable (the statement the disable operation
 * runs), which ends the wait. The request must see the disable.
 */
async function disabledWhileTheWriteWaits(userId: string, send: () => Promise<Answer>): Promise<Answer> {
  let answer: Promise<Answer> | undefined;
  await pair().sql.begin(async (tx: SQL) => {
    await tx`select id from users where id = ${userId} for no key update`;
    answer = send();
    await untilSomeoneWaitsForALock();
    await tx`update users set disabled = true, disabled_until = null where id = ${userId}`;
  });
  return answer!;
}

describe.skipIf(processes.skip)('two server processes: the refusing state is read where the write happens', () => {
  test('/reset-password waiting at its write while a disable commits: USER_DISABLED, the password and the request untouched', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await seedUser(true);
      const request = await ok(await pair().call(round, 'POST', `/users/${user.id}/password-reset-requests`, {}), 'reset request');
      const before = await storedHash(user.id);
      const answer = await disabledWhileTheWriteWaits(user.id, () => pair().call(round, 'POST', '/reset-password', { request_id: request.id, password: NEW_PASSWORD }));
      expect({ round, answer: tally([answer]) }).toEqual({ round, answer: { '400 USER_DISABLED': 1 } });
      expect(await storedHash(user.id)).toBe(before);
      expect((await pair().sql`select id from password_reset_requests where id = ${request.id}`).length).toBe(1);
    }
  }, SCENARIO_MS);

  test('update-password waiting at its write while a disable commits: USER_DISABLED, the password untouched', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await seedUser(true);
      const before = await storedHash(user.id);
      const answer = await disabledWhileTheWriteWaits(user.id, () =>
        pair().call(round, 'POST', `/users/${user.id}/update-password`, { password: PASSWORD, new_password: NEW_PASSWORD }),
      );
      expect({ round, answer: tally([answer]) }).toEqual({ round, answer: { '400 USER_DISABLED': 1 } });
      expect(await storedHash(user.id)).toBe(before);
    }
  }, SCENARIO_MS);

  test('a passkey login waiting at its write while a disable commits: USER_DISABLED, the challenge and the counter unused', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await seedUser(true);
      const authenticator = softAuthenticator();
      const registration = await ok(await pair().call(round, 'POST', `/users/${user.id}/passkey-registration-options`, {}), 'registration options');
      await ok(await pair().call(round, 'POST', `/users/${user.id}/passkeys`, { challenge_id: registration.challenge_id, response: await authenticator.register(registration.options) }), 'registration');
      const options = await ok(await pair().call(round + 1, 'POST', '/passkey-authentication-options', {}), 'authentication options');
      const response = await authenticator.authenticate(options.options);
      const answer = await disabledWhileTheWriteWaits(user.id, () => pair().call(round, 'POST', '/authenticate/passkey', { challenge_id: options.challenge_id, response }));
      expect({ round, answer: tally([answer]) }).toEqual({ round, answer: { '400 USER_DISABLED': 1 } });
      expect((await pair().sql`select id from challenges where id = ${options.challenge_id}`).length).toBe(1);
      expect((await pair().sql`select last_used_at from passkeys where user_id = ${user.id}`)[0].last_used_at).toBeNull();
    }
  }, SCENARIO_MS);

  test('a TOTP second factor waiting at its write while a disable commits: USER_DISABLED, the step unused', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const user = await seedUser(true);
      const key = crypto.getRandomValues(new Uint8Array(20));
      await pair().sql`insert into totp_credentials ${pair().sql({ user_id: user.id, created_at: 1_700_000_000, key: encodeTotpKey(key), last_used_step: 0 })}`;
      const code = generateTotpCode(key, Date.now());
      const answer = await disabledWhileTheWriteWaits(user.id, () => pair().call(round, 'POST', `/users/${user.id}/verify-2fa/totp`, { code }));
      expect({ round, answer: tally([answer]) }).toEqual({ round, answer: { '400 USER_DISABLED': 1 } });
      expect(Number((await pair().sql`select last_used_step from totp_credentials where user_id = ${user.id}`)[0].last_used_step)).toBe(0);
    }
  }, SCENARIO_MS);

  test("the first proof of an address racing the attacker's password checks on both processes: none sent after the redemption answered succeeds", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // The attacker created the user with the victim's address and knows its password.
      const user = await seedUser(false);
      const request = await ok(await pair().call(round, 'POST', '/email-sign-in-requests', { email: user.email }), 'sign-in request');
      let redeemed = false;
      const results: { sentAfter: boolean; answer: Answer }[] = [];
      const check = async (n: number) => {
        const sentAfter = redeemed;
        const answer = await (n % 4 < 2
          ? pair().call(n, 'POST', `/users/${user.id}/verify-password`, { password: PASSWORD })
          : pair().call(n, 'POST', '/authenticate/password', { email: user.email, password: PASSWORD }));
        results.push({ sentAfter, answer });
      };
      const before = Array.from({ length: 10 }, async (_, n) => {
        await Bun.sleep(n * 3);
        await check(n);
      });
      await Bun.sleep(10);
      const signedIn = await ok(await pair().call(round, 'POST', '/authenticate/email-code', { request_id: request.id, code: request.code }), 'redemption');
      redeemed = true;
      expect(signedIn).toMatchObject({ id: user.id, email_verified: true });
      await Promise.all([...before, ...Array.from({ length: 10 }, (_, n) => check(n))]);
      const counts = tally(results.map((result) => result.answer));
      expect({ round, other: Object.keys(counts).filter((key) => !['200', '204', '400 INCORRECT_PASSWORD'].includes(key)) }).toEqual({ round, other: [] });
      const after = results.filter((result) => result.sentAfter);
      expect(after.length).toBeGreaterThanOrEqual(10);
      expect({ round, after: tally(after.map((result) => result.answer)) }).toEqual({ round, after: { '400 INCORRECT_PASSWORD': after.length } });
      expect(new Set(after.map((result) => result.answer.process)).size).toBe(2);
      expect((await pair().sql`select id from events where user_id = ${user.id} and type = 'credentials.revoked'`).length).toBe(1);
    }
  }, SCENARIO_MS);
});
