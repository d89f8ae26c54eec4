import { describe, expect, test } from 'bun:test';
import { createGatehouseClient, GatehousePageError, type ListedUser } from '../client/src/index';
import { generateId } from '../src/security/random';
import { createHarness, SECRET } from './support/harness';
import { insertRows } from './support/rows';

/** The client's listAllUsers walks GET /users by the server's cursor (API.md §20), on any GATEHOUSE_TEST_SETUP. */

async function setup(count: number) {
  const h = createHarness();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: generateId(),
    createdAt: 1_700_000_000 + (i % 4),
    email: `user${i}@${i % 2 === 0 ? 'even' : 'odd'}.example`,
    passwordHash: 'not-a-real-hash',
    recoveryCodeHash: 'not-a-real-hash',
  }));
  await insertRows(h, 'users', rows);
  const urls: URL[] = [];
  const client = (secret = SECRET) =>
    createGatehouseClient({
      url: 'http://localhost',
      secret,
      fetch: (async (url: string, init?: RequestInit) => {
        urls.push(new URL(url));
        return h.handle(new Request(url, init));
      }) as typeof fetch,
    });
  return { h, client, urls };
}

const collect = async (users: AsyncIterable<ListedUser>) => {
  const all: ListedUser[] = [];
  for await (const user of users) all.push(user);
  return all;
};

describe('listAllUsers', () => {
  test('every user of the listing once, in its order, a page of per_page at a time by cursor', async () => {
    const { client, urls } = await setup(45);
    const gatehouse = client();
    for (const input of [{}, { sort_by: 'id', sort_order: 'descending' }, { email_query: 'EVEN', sort_order: 'descending' }] as const) {
      const { data } = await gatehouse.listUsers({ ...input, per_page: 1000 });
      urls.length = 0;
      const all = await collect(gatehouse.listAllUsers({ ...input, per_page: 7 }));
      expect(all).toEqual(data!);
      // No request past the last page, and every request after the first carries only the cursor and per_page.
      expect(urls).toHaveLength(Math.ceil(data!.length / 7));
      expect(urls.slice(1).every((url) => [...url.searchParams.keys()].sort().join() === 'cursor,per_page')).toBe(true);
      expect(urls[0]!.searchParams.has('cursor')).toBe(false);
    }
  });

  test('page and cursor in the input are ignored; the walk starts at the beginning', async () => {
    const { client } = await setup(12);
    const gatehouse = client();
    const { data } = await gatehouse.listUsers({ per_page: 100 });
    const input = { per_page: 5, page: 3, cursor: 'not-a-cursor' } as unknown as Parameters<typeof gatehouse.listAllUsers>[0];
    expect(await collect(gatehouse.listAllUsers(input))).toEqual(data!);
  });

  test('stopping early fetches no more pages', async () => {
    const { client, urls } = await setup(30);
    let seen = 0;
    for await (const _user of client().listAllUsers({ per_page: 10 })) if (++seen === 12) break;
    expect(urls).toHaveLength(2);
  });

  test('an empty set yields nothing after one request', async () => {
    const { client, urls } = await setup(0);
    expect(await collect(client().listAllUsers())).toEqual([]);
    expect(urls).toHaveLength(1);
  });

  test('an error answer rejects with GatehousePageError carrying the code', async () => {
    const { client } = await setup(3);
    const error = await collect(client('a wrong secret of 16+ chars').listAllUsers()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatehousePageError);
    expect((error as GatehousePageError).error).toEqual({ status: 401, code: 'NOT_AUTHENTICATED' });
  });
});
