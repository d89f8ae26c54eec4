// Password migration (API.md §19) under parallel sign-ins alternating between TWO REAL SERVER
// PROCESSES on one PostgreSQL + Redis, with the hook a third process: of parallel correct sign-ins
// of one awaiting user all succeed and one hash and one event are stored; wrong passwords racing
// the right one each count exactly once. Each scenario repeats every run.
import { afterAll, describe, expect, test } from 'bun:test';
import { AWAITING_MIGRATION } from '../src/password-migration/model';
import { generateId } from '../src/security/random';
import { startMigrationHook } from './support/migration-hook';
import { expectTally, twoProcessesForThisFile, type TwoProcesses } from './support/two-processes';

const REPEATS = 5;
const RIGHT = 10;
const SCENARIO_MS = 240_000;
const emails = Array.from({ length: 2 * REPEATS + 2 }, (_, i) => `migrating${i}@example.com`);
const passwordOf = (email: string) => `old system password of ${email}`;
const hook = await startMigrationHook(Object.fromEntries(emails.map((email) => [email, passwordOf(email)])));
afterAll(() => hook.stop());
const processes = await twoProcessesForThisFile('password migration across two server processes', {
  extraArgs: ['--password-migration-url', hook.url, '--password-migration-secret', hook.secret],
});
const pair = (): TwoProcesses => processes.pair();
let seeded = 0;

/** A user as import writes one from `"password_hash": null, "migrate_password": true`. */
async function seedAwaiting(): Promise<{ id: string; email: string; password: string }> {
  const email = emails[seeded++]!;
  const user = { id: generateId(), email };
  await pair().sql`insert into users ${pair().sql({ ...user, created_at: 1_700_000_000, email_verified: true, password_hash: AWAITING_MIGRATION, recovery_code_hash: AWAITING_MIGRATION })}`;
  return { ...user, password: passwordOf(email) };
}

const eventsOf = async (user: string, type: string) => (await pair().sql`select id from events where user_id = ${user} and type = ${type}`).length;
const storedHash = async (user: string): Promise<string> => (await pair().sql`select password_hash from users where id = ${user}`)[0].password_hash;

describe.skipIf(processes.skip)('two server processes: password migration', () => {
  test(`${RIGHT} parallel correct sign-ins of one awaiting user: all 200, one stored hash, one password.migrated`, async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedAwaiting();
      // Each from its own address: one address's checks run one at a time, which would order them.
      const answers = await pair().parallel(RIGHT, (n) => ({
        method: 'POST',
        path: '/authenticate/password',
        body: { email: user.email, password: user.password, client_ip: `10.${round}.0.${n + 1}` },
      }));
      expectTally(round, answers, { '200': RIGHT });
      expect({ round, migrated: await eventsOf(user.id, 'password.migrated') }).toEqual({ round, migrated: 1 });
      const hash = await storedHash(user.id);
      expect(hash.startsWith('$argon2id$')).toBe(true);
      expect(await Bun.password.verify(user.password, hash)).toBe(true);
    }
  }, SCENARIO_MS);

  test('wrong passwords racing the right ones: each wrong one counted exactly once, the 5th of one address blocks it once', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedAwaiting();
      const blocked = `10.${100 + round}.0.200`;
      const answers = await pair().parallel(RIGHT + 5, (n) => ({
        method: 'POST',
        path: '/authenticate/password',
        body:
          n < RIGHT
            ? { email: user.email, password: user.password, client_ip: `10.${100 + round}.0.${n + 1}` }
            : { email: user.email, password: `not it ${n}`, client_ip: blocked },
      }));
      expectTally(round, answers, { '200': RIGHT, '400 INCORRECT_PASSWORD': 5 });
      expect({ round, incorrect: await eventsOf(user.id, 'password.incorrect'), blocks: await eventsOf(user.id, 'address.blocked') }).toEqual({ round, incorrect: 5, blocks: 1 });
      expect({ round, migrated: await eventsOf(user.id, 'password.migrated') }).toEqual({ round, migrated: 1 });
    }
  }, SCENARIO_MS);

  test('the awaiting gauge on /metrics counts what is left, on either process', async () => {
    await seedAwaiting();
    await seedAwaiting();
    const left = (await pair().sql`select count(*)::int as n from users where password_hash = ${AWAITING_MIGRATION}`)[0].n;
    expect(left).toBe(2);
    for (const server of pair().servers) {
      const text = await (await server.request('GET', '/metrics')).text();
      expect(text).toContain(`gatehouse_users_awaiting_password_migration ${left}\n`);
    }
  });

  test("no process's output, no event and no metric holds a password it was sent", async () => {
    const passwords = [...emails.map(passwordOf), 'not it'];
    const outputs = pair().servers.map((server) => `${JSON.stringify(server.lines)}\n${server.stderr()}`);
    const metrics = await Promise.all(pair().servers.map(async (server) => (await server.request('GET', '/metrics')).text()));
    const events = JSON.stringify(await pair().sql`select * from events`);
    for (const password of passwords) {
      expect({ password, found: [...outputs, ...metrics, events].some((text) => text.includes(password)) }).toEqual({ password, found: false });
    }
    // The hook's origin is logged at start-up, never its path.
    expect(outputs[0]).toContain(`asking the password migration hook at ${new URL(hook.url).origin}`);
    expect(outputs[0]).not.toContain('/hooks/password');
  });
});
