import { describe, expect, test } from 'bun:test';
import { fillPlaceholders } from 'drizzle-orm';
import type { ListOptions } from '../src/users/model';
import { prepareCount as pgCount, preparePage as pgPage } from '../src/users/store.pg';
import { prepareCount, preparePage } from '../src/users/store';
import { createHarness, type Harness } from './support/harness';
import { insertUsersForQueryPlans } from './support/rows';

/** API.md §14: GET /users?email= finds one address exactly, through the email index. */

async function setup() {
  const h = createHarness();
  await h.ready;
  const ada = await h.createUser({ email: 'ada.lovelace@example.com' });
  const grace = await h.createUser({ email: 'grace@example.com' });
  await h.createUser({ email: 'ada.lovelace@example.community' });
  await h.createUser();
  return { h, ada, grace };
}

const list = async (h: Harness, query: string) => {
  const res = await h.call('GET', `/users?${query}`);
  expect(res.status).toBe(200);
  return { ids: (res.json as { id: string }[]).map((u) => u.id), total: res.headers.get('x-pagination-total'), pages: res.headers.get('x-pagination-total-pages') };
};

describe('GET /users?email=', () => {
  test('the one user with exactly that address, with the usual headers', async () => {
    const { h, ada, grace } = await setup();
    expect(await list(h, 'email=ada.lovelace%40example.com')).toEqual({ ids: [ada.id], total: '1', pages: '1' });
    expect(await list(h, 'email=grace@example.com')).toEqual({ ids: [grace.id], total: '1', pages: '1' });
    // A substring, a longer address or an unknown one is no match.
    for (const email of ['ada.lovelace@example.co', 'lovelace@example.com', 'da.lovelace@example.com', 'nobody@example.com']) {
      expect({ email, ...(await list(h, `email=${encodeURIComponent(email)}`)) }).toEqual({ email, ids: [], total: '0', pages: '0' });
    }
  });

  test('compared after NFC normalisation and lower-casing, like stored addresses', async () => {
    const { h, ada } = await setup();
    expect((await list(h, 'email=ADA.Lovelace%40Example.COM')).ids).toEqual([ada.id]);
    const decomposed = await h.createUser({ email: 'Zoe\u0301@example.com' });
    expect((await list(h, `email=${encodeURIComponent('zo\u00e9@EXAMPLE.com')}`)).ids).toEqual([decomposed.id]);
    expect((await list(h, `email=${encodeURIComponent('ZOE\u0301@example.com')}`)).ids).toEqual([decomposed.id]);
  });

  test('an address that is not valid, empty or given twice matches nobody (never 400, never every user)', async () => {
    const { h, ada } = await setup();
    for (const query of ['email=', 'email=ada', 'email=%20ada.lovelace@example.com', 'email=a@b', 'email=a%40b%40example.com', `email=${'a'.repeat(250)}@example.com`, 'email=ada.lovelace@example.com&email=ada.lovelace@example.com', 'email']) {
      expect({ query, ...(await list(h, query)) }).toEqual({ query, ids: [], total: '0', pages: '0' });
    }
    expect((await list(h, 'email=ada.lovelace@example.com&page=abc&per_page=-1')).ids).toEqual([ada.id]);
  });

  test('combines with the other parameters: a page past the end, email_query, sorting', async () => {
    const { h, ada } = await setup();
    expect(await list(h, 'email=ada.lovelace@example.com&page=2')).toEqual({ ids: [], total: '1', pages: '1' });
    expect(await list(h, 'email=ada.lovelace@example.com&email_query=lovelace&sort_by=id&sort_order=descending')).toEqual({ ids: [ada.id], total: '1', pages: '1' });
    expect(await list(h, 'email=ada.lovelace@example.com&email_query=grace')).toEqual({ ids: [], total: '0', pages: '0' });
  });

  test('a disabled user is found, and shows its state', async () => {
    const { h, ada } = await setup();
    await h.call('POST', `/users/${ada.id}/disable`);
    expect((await h.call('GET', '/users?email=ada.lovelace@example.com')).json).toMatchObject([{ id: ada.id, disabled: true }]);
  });
});

describe('the lookup uses the email index (query plans)', () => {
  const options: ListOptions = { sortBy: 'created_at', ascending: true, perPage: 20, page: 1, emailQuery: null, email: 'user42@example.com', after: null };
  const values = { email: 'user42@example.com', query: null, limit: 20, offset: 0 };


  test('the page and the count search users_email_unique', async () => {
    const h = createHarness();
    await h.ready;
    await insertUsersForQueryPlans(h);
    const { backend } = h;
    if (backend.kind === 'sqlite') {
      for (const query of [preparePage(backend.db, options).getQuery(), prepareCount(backend.db, options).getQuery()]) {
        const plan = backend.db.$client.query(`EXPLAIN QUERY PLAN ${query.sql}`).all(...(fillPlaceholders(query.params, values) as never[])) as { detail: string }[];
        const details = plan.map((row) => row.detail).join('\n');
        expect(details).toMatch(/SEARCH users USING (COVERING )?INDEX users_email_unique \(email=\?\)/);
        expect(details).not.toMatch(/SCAN users\b/);
      }
    } else {
      for (const [i, query] of [pgPage(backend.db, options, 'plan_page').getQuery(), pgCount(backend.db, options, 'plan_count').getQuery()].entries()) {
        // The placeholders as literals, so EXPLAIN plans the query as a generic one would run with these values.
        const params = fillPlaceholders(query.params, values);
        const text = query.sql.replace(/\$(\d+)/g, (_, n) => {
          const value = params[Number(n) - 1];
          return typeof value === 'number' ? String(value) : `'${String(value)}'`;
        });
        const plan = (await backend.db.$client.unsafe(`EXPLAIN ${text}`)) as { 'QUERY PLAN': string }[];
        const lines = plan.map((row) => row['QUERY PLAN']).join('\n');
        expect({ i, lines }).toEqual({ i, lines: expect.stringMatching(/Index (Only )?Scan using users_email_unique on users/) });
        expect(lines).not.toContain('Seq Scan on users');
      }
    }
  });
});
