import { describe, expect, test } from 'bun:test';
import { fillPlaceholders } from 'drizzle-orm';
import { encodeCursor } from '../src/http/cursor';
import { generateId } from '../src/security/random';
import type { ListOptions } from '../src/users/model';
import { preparePage as pgPage } from '../src/users/store.pg';
import { pageValues, preparePage } from '../src/users/store';
import { createHarness, expectError, type Harness } from './support/harness';
import { insertRows, insertUsersForQueryPlans } from './support/rows';

/** API.md §20: GET /users pages by keyset cursor, with Link rel="next" and X-Pagination-Next-Cursor. */

interface Seeded {
  h: Harness;
  rows: { id: string; createdAt: number; email: string | null }[];
}

/** 53 users whose created_at values repeat (ties by id) and whose emails differ in case of the filter. */
async function seeded(): Promise<Seeded> {
  const h = createHarness();
  const rows = Array.from({ length: 53 }, (_, i) => ({
    id: generateId(),
    createdAt: 1_700_000_000 + ((i * 7) % 9),
    email: i % 5 === 4 ? null : `user${i}@${i % 3 === 0 ? 'match' : 'other'}.example`,
    passwordHash: 'not-a-real-hash',
    recoveryCodeHash: 'not-a-real-hash',
  }));
  await insertRows(h, 'users', rows);
  return { h, rows };
}

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
function expected(rows: Seeded['rows'], sortBy: string, order: string, query: string | null) {
  const kept = rows.filter((r) => query === null || (r.email ?? '').includes(query));
  const sorted = kept.sort(sortBy === 'id' ? byId : (a, b) => a.createdAt - b.createdAt || byId(a, b));
  return (order === 'descending' ? sorted.reverse() : sorted).map((r) => r.id);
}

/** Follows Link rel="next" from `first` to the end, checking each answer's headers on the way. */
async function walk(h: Harness, first: string) {
  const ids: string[] = [];
  const pages: number[] = [];
  let path: string | null = first;
  while (path !== null) {
    const res = await h.call('GET', path);
    expect(res.status).toBe(200);
    ids.push(...res.json.map((u: { id: string }) => u.id));
    pages.push(res.json.length);
    const link = res.headers.get('link');
    const cursor = res.headers.get('x-pagination-next-cursor');
    expect(link === null).toBe(cursor === null);
    if (link === null) break;
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(match).not.toBeNull();
    const next = new URL(match![1]!);
    expect(next.pathname).toBe('/users');
    expect(next.searchParams.get('cursor')).toBe(cursor);
    path = `${next.pathname}${next.search}`;
    if (pages.length > 100) throw new Error('the walk does not end');
  }
  return { ids, pages };
}

describe('GET /users by cursor', () => {
  for (const sortBy of ['created_at', 'id']) {
    for (const order of ['ascending', 'descending']) {
      test(`sort_by=${sortBy}&sort_order=${order}, with and without email_query: every user once, in order`, async () => {
        const { h, rows } = await seeded();
        for (const query of [null, 'MATCH']) {
          const filter = query === null ? '' : `&email_query=${query}`;
          const { ids, pages } = await walk(h, `/users?per_page=7&sort_by=${sortBy}&sort_order=${order}${filter}`);
          expect(ids).toEqual(expected(rows, sortBy, order, query?.toLowerCase() ?? null));
          expect(pages.slice(0, -1).every((n) => n === 7)).toBe(true);
          expect(pages.at(-1)).toBeGreaterThan(0);
        }
      });
    }
  }

  test('X-Pagination-Total still counts the whole (filtered) set on every page', async () => {
    const { h, rows } = await seeded();
    const first = await h.call('GET', '/users?per_page=10&email_query=match');
    const total = String(expected(rows, 'id', 'ascending', 'match').length);
    expect(first.headers.get('x-pagination-total')).toBe(total);
    const cursor = first.headers.get('x-pagination-next-cursor')!;
    const second = await h.call('GET', `/users?per_page=10&cursor=${cursor}`);
    expect([second.headers.get('x-pagination-total'), second.headers.get('x-pagination-total-pages')]).toEqual([total, String(Math.ceil(Number(total) / 10))]);
  });

  test('a page by number also carries the cursor of the page after it; the last page and an empty set carry none', async () => {
    const { h, rows } = await seeded();
    const order = expected(rows, 'created_at', 'ascending', null);
    const third = await h.call('GET', '/users?per_page=10&page=3');
    const next = await h.call('GET', `/users?per_page=10&cursor=${third.headers.get('x-pagination-next-cursor')}`);
    expect(next.json.map((u: { id: string }) => u.id)).toEqual(order.slice(30, 40));
    for (const path of ['/users?per_page=10&page=6', '/users?per_page=10&page=7', '/users?per_page=53', '/users?email_query=nobody', '/users?email=nobody@example.com', '/users?email=not-an-address']) {
      const res = await h.call('GET', path);
      expect({ path, link: res.headers.get('link'), cursor: res.headers.get('x-pagination-next-cursor') }).toEqual({ path, link: null, cursor: null });
    }
    // Exactly a page's worth left: the page before the end still knows there is one more.
    expect((await h.call('GET', '/users?per_page=52')).headers.get('x-pagination-next-cursor')).not.toBeNull();
  });

  test('the cursor keeps its sort and filter and ignores page, sort_by, sort_order and email_query beside it', async () => {
    const { h, rows } = await seeded();
    const order = expected(rows, 'id', 'descending', 'match');
    const first = await h.call('GET', '/users?per_page=5&sort_by=id&sort_order=descending&email_query=match');
    const cursor = first.headers.get('x-pagination-next-cursor')!;
    const beside = await h.call('GET', `/users?per_page=5&cursor=${cursor}&page=4&sort_by=created_at&sort_order=ascending&email_query=other`);
    expect(beside.json.map((u: { id: string }) => u.id)).toEqual(order.slice(5, 10));
    // per_page comes from the request, so a client may change it while walking.
    const wider = await h.call('GET', `/users?per_page=8&cursor=${cursor}`);
    expect(wider.json.map((u: { id: string }) => u.id)).toEqual(order.slice(5, 13));
  });

  test('an exact email listing pages by cursor too', async () => {
    const { h, rows } = await seeded();
    const one = rows.find((r) => r.email !== null)!;
    const res = await h.call('GET', `/users?per_page=1&email=${one.email}`);
    expect(res.json.map((u: { id: string }) => u.id)).toEqual([one.id]);
    expect(res.headers.get('link')).toBeNull();
  });

  test('users written between pages: no user twice, none skipped that was there all along', async () => {
    const { h, rows } = await seeded();
    const order = expected(rows, 'created_at', 'ascending', null);
    const first = await h.call('GET', '/users?per_page=20');
    // One user before the cursor and one after it in the order; and a user of the next page deleted.
    const early = { id: generateId(), createdAt: 1_600_000_000, email: null, passwordHash: 'h', recoveryCodeHash: 'r' };
    const late = { id: generateId(), createdAt: 1_800_000_000, email: null, passwordHash: 'h', recoveryCodeHash: 'r' };
    await insertRows(h, 'users', [early, late]);
    expect((await h.call('DELETE', `/users/${order[25]}`)).status).toBe(204);
    const rest = await walk(h, `/users?per_page=20&cursor=${first.headers.get('x-pagination-next-cursor')}`);
    expect(rest.ids).toEqual([...order.slice(20, 25), ...order.slice(26), late.id]);
  });

  test('a cursor that cannot be read → 400 INVALID_DATA', async () => {
    const { h } = await seeded();
    const cursor = (await h.call('GET', '/users?per_page=5')).headers.get('x-pagination-next-cursor')!;
    const flipped = cursor.slice(0, 10) + (cursor[10] === 'A' ? 'B' : 'A') + cursor.slice(11);
    const unchecked = Buffer.from(JSON.stringify({ s: 'id', d: false, q: null, e: null, c: 1, i: 'x' })).toString('base64url');
    const bad = [
      '',
      'abc',
      cursor.slice(0, -2),
      flipped,
      `${cursor}=`,
      `${cursor}%00`,
      'x'.repeat(5000),
      unchecked,
      encodeCursor({ s: 'email', d: false, q: null, e: null, c: 1, i: 'x' }),
      encodeCursor({ s: 'id', d: 'no', q: null, e: null, c: 1, i: 'x' }),
      encodeCursor({ s: 'id', d: false, q: null, e: null, c: 1.5, i: 'x' }),
      encodeCursor({ s: 'id', d: false, q: null, e: null, c: 1, i: '' }),
      encodeCursor({ s: 'id', d: false, q: 5, e: null, c: 1, i: 'x' }),
      encodeCursor(['id']),
      encodeCursor(null),
    ];
    for (const value of bad) {
      const res = await h.call('GET', `/users?cursor=${encodeURIComponent(value).replace(/%25/g, '%')}`);
      expect({ value, status: res.status, json: res.json }).toEqual({ value, status: 400, json: { error: 'INVALID_DATA' } });
    }
    expectError(await h.call('GET', `/users?cursor=${cursor}&cursor=${cursor}`), 400, 'INVALID_DATA');
    expectError(await h.call('GET', '/users?cursor'), 400, 'INVALID_DATA');
    // The good one still works.
    expect((await h.call('GET', `/users?per_page=5&cursor=${cursor}`)).status).toBe(200);
  });
});

describe('a cursor page reads only its rows: the keyset uses the sort index (query plans)', () => {
  const shapes: [ListOptions['sortBy'], boolean, RegExp, RegExp][] = [
    ['created_at', true, /SEARCH users USING INDEX users_created_at_id \(\(created_at,id\)>\(\?,\?\)\)/, /Index Scan using users_created_at_id on users/],
    ['created_at', false, /SEARCH users USING INDEX users_created_at_id \(\(created_at,id\)<\(\?,\?\)\)/, /Index Scan Backward using users_created_at_id on users/],
    ['id', true, /SEARCH users USING INDEX sqlite_autoindex_users_1 \(id>\?\)/, /Index Scan using users_pkey on users/],
    ['id', false, /SEARCH users USING INDEX sqlite_autoindex_users_1 \(id<\?\)/, /Index Scan Backward using users_pkey on users/],
  ];


  test('every sort, with and without email_query: an index range from the cursor, no sort step, no full scan', async () => {
    const h = createHarness();
    await h.ready;
    await insertUsersForQueryPlans(h);
    const { backend } = h;
    for (const [sortBy, ascending, sqlitePlan, pgPlan] of shapes) {
      for (const emailQuery of [null, 'user4']) {
        const options: ListOptions = { sortBy, ascending, perPage: 100, page: 1, emailQuery, email: null, after: { createdAt: 4000, id: 'n' } };
        const values = pageValues(options);
        if (backend.kind === 'sqlite') {
          const query = preparePage(backend.db, options).getQuery();
          const plan = backend.db.$client.query(`EXPLAIN QUERY PLAN ${query.sql}`).all(...(fillPlaceholders(query.params, values) as never[])) as { detail: string }[];
          const details = plan.map((row) => row.detail).join('\n');
          expect({ sortBy, ascending, emailQuery, details }).toEqual({ sortBy, ascending, emailQuery, details: expect.stringMatching(sqlitePlan) });
          expect(details).not.toMatch(/TEMP B-TREE|SCAN users\b/);
        } else {
          const query = pgPage(backend.db, options, `plan_${sortBy}_${ascending}_${emailQuery !== null}`).getQuery();
          const params = fillPlaceholders(query.params, values);
          const text = query.sql.replace(/\$(\d+)/g, (_, n) => {
            const value = params[Number(n) - 1];
            return typeof value === 'number' ? String(value) : `'${String(value)}'`;
          });
          const plan = (await backend.db.$client.unsafe(`EXPLAIN ${text}`)) as { 'QUERY PLAN': string }[];
          const lines = plan.map((row) => row['QUERY PLAN']).join('\n');
          expect({ sortBy, ascending, emailQuery, lines }).toEqual({ sortBy, ascending, emailQuery, lines: expect.stringMatching(pgPlan) });
          expect(lines).toContain('Index Cond');
          expect(lines).not.toMatch(/Seq Scan on users|Sort\b/);
          // The server runs it as a prepared statement, which PostgreSQL may plan once for any values: that plan too.
          const connection = await backend.db.$client.reserve();
          try {
            await connection.unsafe('SET plan_cache_mode = force_generic_plan');
            await connection.unsafe(`PREPARE generic_page AS ${query.sql}`);
            const args = params.map((value) => (typeof value === 'number' ? String(value) : `'${String(value)}'`)).join(', ');
            const generic = ((await connection.unsafe(`EXPLAIN EXECUTE generic_page(${args})`)) as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n');
            expect({ sortBy, ascending, emailQuery, generic }).toEqual({ sortBy, ascending, emailQuery, generic: expect.stringMatching(pgPlan) });
            expect(generic).not.toMatch(/Seq Scan on users|Sort\b/);
          } finally {
            await connection.unsafe('DEALLOCATE ALL').catch(() => undefined);
            await connection.unsafe('RESET plan_cache_mode').catch(() => undefined);
            connection.release();
          }
        }
      }
    }
  });
});
