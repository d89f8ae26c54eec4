// API keys (API.md §18) under parallel requests alternating between TWO REAL SERVER PROCESSES on one
// PostgreSQL + Redis, each scenario repeated every run: the cap of 100 keys, a delete racing verifies,
// and last_used_at written once a minute whichever process checks the key.
import { describe, expect, test } from 'bun:test';
import { generateId } from '../src/security/random';
import { deleteDuringVerifies } from './support/api-keys';
import { expectTally, ok, twoProcessesForThisFile, type TwoProcesses } from './support/two-processes';

const processes = await twoProcessesForThisFile('API keys across two server processes');
const pair = (): TwoProcesses => processes.pair();
const REPEATS = 5;
const PARALLEL = 20;
const SCENARIO_MS = 240_000;

/** A user straight into the database with `keys` keys (no hashing: the requests under test do the work). */
async function seedUser(keys: number): Promise<string> {
  const id = generateId();
  const hash = '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC';
  await pair().sql`insert into users ${pair().sql({ id, created_at: 1_700_000_000, email_verified: false, password_hash: hash, recovery_code_hash: hash })}`;
  for (let i = 0; i < keys; i++) {
    const row = { id: generateId(), user_id: id, name: `seed ${i}`, scopes: '', secret_hash: '0'.repeat(64), start: 'gh_seed', created_at: 1_700_000_000 };
    await pair().sql`insert into api_keys ${pair().sql(row)}`;
  }
  return id;
}

const keysOf = async (user: string) => Number((await pair().sql`select count(*) as n from api_keys where user_id = ${user}`)[0].n);

describe.skipIf(processes.skip)(`two server processes: API keys, ${PARALLEL} parallel requests`, () => {
  test('20 parallel creations for a user holding 90 keys: exactly 10 succeed, exactly 100 stored', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser(90);
      const answers = await pair().parallel(PARALLEL, (n) => ({ method: 'POST', path: `/users/${user}/api-keys`, body: { name: `parallel ${n}` } }));
      expectTally(round, answers, { '200': 10, '400 NOT_ALLOWED': 10 });
      expect({ round, stored: await keysOf(user) }).toEqual({ round, stored: 100 });
    }
  }, SCENARIO_MS);

  test('a key deleted on one process while both verify it: no success for a verify sent after the delete answered', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser(0);
      const created = await ok(await pair().call(round, 'POST', `/users/${user}/api-keys`, { name: 'doomed' }), 'create');
      await deleteDuringVerifies((n, method, path, body) => pair().call(n, method, path, body), user, created);
    }
  }, SCENARIO_MS);

  test('20 parallel verifies of one key on both processes: every one 200, last_used_at written once', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = await seedUser(0);
      const created = await ok(await pair().call(round, 'POST', `/users/${user}/api-keys`, { name: 'busy' }), 'create');
      // Counts every UPDATE of the key's row (the insert is done).
      await pair().sql.unsafe(`create table if not exists key_writes (n int)`);
      await pair().sql.unsafe(`create or replace function count_key_write() returns trigger language plpgsql as $$ begin insert into key_writes values (1); return new; end $$`);
      await pair().sql.unsafe(`create or replace trigger count_key_write after update on api_keys for each row execute function count_key_write()`);
      await pair().sql.unsafe('delete from key_writes');
      const answers = await pair().parallel(PARALLEL, () => ({ method: 'POST', path: '/verify-api-key', body: { key: created.key } }));
      expectTally(round, answers, { '200': PARALLEL });
      const writes = Number((await pair().sql`select count(*) as n from key_writes`)[0].n);
      expect({ round, writes }).toEqual({ round, writes: 1 });
    }
  }, SCENARIO_MS);
});
