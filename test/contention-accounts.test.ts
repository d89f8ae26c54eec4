// Account lifecycle and email sign-in (API.md §14, §15) under parallel requests alternating between
// TWO REAL SERVER PROCESSES on one PostgreSQL + Redis, each scenario repeated every run: the races the
// in-process pair (postgres-2) also runs, here with separate event loops, pools and Redis links.
import { describe, expect, test } from 'bun:test';
import { generateId } from '../src/security/random';
import { expectServedShares, expectTally, ok, tally, twoProcessesForThisFile, type Answer, type TwoProcesses } from './support/two-processes';

const processes = await twoProcessesForThisFile('account lifecycle and email sign-in across two server processes');
const pair = (): TwoProcesses => processes.pair();
const REPEATS = 5;
const PARALLEL = 20;
const SCENARIO_MS = 240_000;
const PASSWORD = 'contention password 0123';
const passwordHash = Bun.password.hash(PASSWORD, { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });

/** Users straight into the database, each with an address: hashing stays for the requests under test. */
async function seedUser(): Promise<{ id: string; email: string }> {
  const user = { id: generateId(), email: `${generateId().slice(0, 12)}@example.com` };
  const hash = await passwordHash;
  await pair().sql`insert into users ${pair().sql({ ...user, created_at: 1_700_000_000, email_verified: false, password_hash: hash, recovery_code_hash: hash })}`;
  return user;
}

const eventsOf = async (user: string, type: string) => (await pair().sql`select id from events where user_id = ${user} and type = ${type}`).length;
const wrongCode = (code: string) => (code[0] === 'A' ? 'B' : 'A') + code.slice(1);

describe.skipIf(processes.skip)(`two server processes: account states and email codes, ${PARALLEL} parallel requests`, () => {
  test('one email code redeemed by 20 parallel requests: exactly one 200, one email_code.used', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser();
      const request = await ok(await pair().call(round, 'POST', '/email-sign-in-requests', { email: user.email }), 'sign-in request');
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: '/authenticate/email-code', body: { request_id: request.id, code: request.code } }));
      expectTally(round, answers, { '200': 1, '400 INVALID_REQUEST': PARALLEL - 1 });
      expect(answers.find((answer) => answer.status === 200)!.json).toMatchObject({ id: user.id, email_verified: true });
      expect({ round, used: await eventsOf(user.id, 'email_code.used') }).toEqual({ round, used: 1 });
    }
  }, SCENARIO_MS);

  test('20 parallel wrong email codes: exactly 5 counted, the 5th ends the request', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser();
      const request = await ok(await pair().call(round, 'POST', '/email-sign-in-requests', { email: user.email }), 'sign-in request');
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: '/authenticate/email-code', body: { request_id: request.id, code: wrongCode(request.code) } }));
      expectTally(round, answers, { '400 INCORRECT_CODE': 5, '400 INVALID_REQUEST': PARALLEL - 5 });
      expect({ round, incorrect: await eventsOf(user.id, 'email_code.incorrect') }).toEqual({ round, incorrect: 5 });
      // The right code is too late: the request is gone.
      expect((await pair().call(round, 'POST', '/authenticate/email-code', { request_id: request.id, code: request.code })).json).toEqual({ error: 'INVALID_REQUEST' });
    }
  }, SCENARIO_MS);

  test('parallel disables of an enabled user, then parallel enables: every answer 200, a user.disabled event per disable and one user.enabled', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser();
      const disables = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/users/${user.id}/disable`, body: {} }));
      expectTally(round, disables, { '200': PARALLEL });
      // Disabling a disabled user replaces its state and writes the event again: one per request.
      expect({ round, disabled: await eventsOf(user.id, 'user.disabled') }).toEqual({ round, disabled: PARALLEL });
      const enables = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: `/users/${user.id}/enable` }));
      expectTally(round, enables, { '200': PARALLEL });
      for (const answer of enables) expect(answer.json.disabled).toBe(false);
      expect({ round, enabled: await eventsOf(user.id, 'user.enabled') }).toEqual({ round, enabled: 1 });
    }
  }, SCENARIO_MS);

  test('a disable racing correct passwords on both processes: none sent after the disable answered succeeds', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser();
      let disableAnswered = false;
      const results: { sentAfter: boolean; answer: Answer }[] = [];
      const check = async (n: number) => {
        const sentAfter = disableAnswered;
        const answer = await pair().call(n, 'POST', `/users/${user.id}/verify-password`, { password: PASSWORD });
        results.push({ sentAfter, answer });
      };
      const before = Array.from({ length: 10 }, async (_, n) => {
        await Bun.sleep(n * 3);
        await check(n);
      });
      await Bun.sleep(10);
      await ok(await pair().call(round, 'POST', `/users/${user.id}/disable`, {}), 'disable');
      disableAnswered = true;
      const since = pair().mark();
      await Promise.all([...before, ...Array.from({ length: 10 }, (_, n) => check(n))]);
      const counts = tally(results.map((result) => result.answer));
      expect({ round, other: Object.keys(counts).filter((key) => key !== '204' && key !== '400 USER_DISABLED') }).toEqual({ round, other: [] });
      const after = results.filter((result) => result.sentAfter);
      expect(after.length).toBeGreaterThanOrEqual(10);
      expect({ round, after: tally(after.map((result) => result.answer)) }).toEqual({ round, after: { '400 USER_DISABLED': after.length } });
      // Each process's own access lines: it served at least the checks sent to it after the disable.
      const sentAfter = after.map((result) => result.answer);
      expectServedShares(round, sentAfter, await pair().servedSince(since, sentAfter));
    }
  }, SCENARIO_MS);
});
