import { expect, test } from 'bun:test';
import { createHarness, type Harness } from './support/harness';
import { deleteDuringVerifies } from './support/api-keys';
import { rowsOf } from './support/rows';

/**
 * API keys under parallel requests (API.md §18, §1 Atomicity), on every set-up: with postgres-2 the
 * requests alternate between two instances. test/contention-api-keys.test.ts runs the same on two processes.
 */
const ROUNDS = 5;

const create = (h: Harness, userId: string, name: string) => h.call('POST', `/users/${userId}/api-keys`, { body: { name } });

test('20 parallel creations for a user holding 90 keys: exactly 10 succeed, the user ends with exactly 100', async () => {
  const h = createHarness();
  for (let round = 0; round < ROUNDS; round++) {
    const user = await h.createUser();
    for (let i = 0; i < 90; i++) await create(h, user.id, `seed ${i}`);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(h, user.id, `parallel ${i}`)));
    const statuses = answers.map((a) => (a.status === 200 ? '200' : `${a.status} ${a.json.error}`)).sort();
    expect({ round, statuses }).toEqual({ round, statuses: [...Array(10).fill('200'), ...Array(10).fill('400 NOT_ALLOWED')] });
    expect({ round, stored: (await rowsOf(h, 'apiKeys', { userId: user.id })).length }).toEqual({ round, stored: 100 });
  }
}, 120_000);

test('a key deleted while verifies keep arriving: no success for a verify sent after the delete answered', async () => {
  const h = createHarness();
  for (let round = 0; round < ROUNDS; round++) {
    const user = await h.createUser();
    const created = (await create(h, user.id, 'doomed')).json;
    await deleteDuringVerifies((_n, method, path, body) => h.call(method, path, { body }), user.id, created);
  }
}, 120_000);
