// GET /users?email=ADDRESS (the address alone) is answered by the outer handler without Elysia's
// router (src/http/handler.ts, DirectQuery; src/app.ts). These tests hold it to the routed answer for
// every kind of query string, taken or handed on, and check its log line and metrics label.
import { describe, expect, test } from 'bun:test';
import { createRequestHandler } from '../src/http/handler';
import { defaultKey } from '../src/keys/model';
import { createKeyRing } from '../src/keys/service';
import { isLookupByEmail } from '../src/users/routes';
import { createHarness, SECRET } from './support/harness';
import { SETUP } from './support/setups';

const h = createHarness();
const secretOnly = createKeyRing([defaultKey(SECRET)]);

/** The same instance's app behind a handler with no direct answers: every request routed by Elysia. */
function routedOnly() {
  const instance = h.instances[0]!;
  return createRequestHandler({ findCaller: secretOnly.find, log: () => {}, route: (request) => instance.app.handle(request), docs: true });
}

async function answerOf(handle: (request: Request) => Response | Promise<Response>, path: string, method = 'GET') {
  const response = await handle(new Request(`http://localhost${path}`, { method, headers: { authorization: SECRET } }));
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

/** Every kind of query string a lookup by address can be sent with. */
const lookups = [
  '/users?email=ada@example.com',
  '/users?email=ADA%40Example.COM',
  '/users?email=nobody@example.com',
  '/users?email=not-an-address',
  '/users?email=',
  '/users?email=ada@example.com&page=2',
  '/users?email=ada@example.com&per_page=1&sort_order=descending',
  '/users?email=ada@example.com&email=grace@example.com',
  '/users?email=a%zz@example.com',
  '/users?email=ada+x@example.com',
  '/users?email',
  '/users?email_query=example',
  '/users',
  '/users/?email=ada@example.com',
  // Decoded without URLSearchParams: a non-ASCII address, escapes that are not UTF-8, an invisible character, '+' escaped.
  '/users?email=J%C3%BCrgen@example.com',
  '/users?email=j%C3%9Crgen@EXAMPLE.com',
  '/users?email=ada%40example.com%F0%9F',
  '/users?email=%C0%AFada@example.com',
  '/users?email=%ED%A0%80@example.com',
  '/users?email=ada%E2%80%8B@example.com',
  '/users?email=ada%2Bx@example.com',
  '/users?email=off@example.com',
  '/users?email=%',
];

describe(`GET /users?email= without the router (${SETUP})`, () => {
  test('takes exactly the address alone, and hands every other query to the router', () => {
    const searchOf = (path: string) => (path.includes('?') ? path.slice(path.indexOf('?')) : '');
    const taken = lookups.filter((path) => isLookupByEmail(searchOf(path)));
    // The last is taken by its query, but its path is not /users: the handler's path check hands it on.
    expect(taken).toEqual([...lookups.slice(0, 5), lookups[8]!, lookups[9]!, ...lookups.slice(13)]);
  });

  test('answers every kind of query string exactly as the routed request does', async () => {
    await h.ready;
    const ada = await h.createUser({ email: 'ada@example.com' });
    await h.createUser({ email: 'grace@example.com' });
    const jurgen = await h.createUser({ email: 'jürgen@example.com' });
    await h.createUser({ email: 'ada+x@example.com' });
    const off = await h.createUser({ email: 'off@example.com' });
    expect((await h.call('POST', `/users/${off.id}/disable`, { body: {} })).status).toBe(200);
    const routed = routedOnly();
    const direct = h.instances[0]!.handle;
    for (const path of lookups) {
      for (const method of ['GET', 'HEAD']) {
        expect({ path, method, ...(await answerOf(direct, path, method)) }).toEqual({ path, method, ...(await answerOf(routed, path, method)) });
      }
    }
    const found = await answerOf(direct, lookups[1]!);
    expect({ ids: JSON.parse(found.body).map((u: { id: string }) => u.id), total: found.headers['x-pagination-total'], pages: found.headers['x-pagination-total-pages'] }).toEqual({
      ids: [ada.id],
      total: '1',
      pages: '1',
    });
    expect((await answerOf(direct, lookups[2]!)).headers['x-pagination-total']).toBe('0');
    const idsOf = async (path: string) => JSON.parse((await answerOf(direct, path)).body).map((u: { id: string }) => u.id);
    expect(await idsOf('/users?email=j%C3%9Crgen@EXAMPLE.com')).toEqual([jurgen.id]);
    expect(JSON.parse((await answerOf(direct, '/users?email=off@example.com')).body)).toMatchObject([{ id: off.id, disabled: true }]);
  });

  test('asks for the credential first, writes the access line and counts the request under /users', async () => {
    await h.createUser({ email: 'lin@example.com' });
    expect((await h.call('GET', '/users?email=lin@example.com', { auth: null })).json).toEqual({ error: 'NOT_AUTHENTICATED' });
    const counted = async () => {
      const metrics = (await h.callEach('GET', '/metrics'))[0]!;
      return Number(/gatehouse_http_requests_total\{method="GET",route="\/users",status="200"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    };
    const before = await counted();
    const lines = h.logs.length;
    expect((await answerOf(h.instances[0]!.handle, '/users?email=lin@example.com')).status).toBe(200);
    expect((await answerOf(h.instances[0]!.handle, '/users?email=nobody@example.com')).status).toBe(200);
    const written = h.logs.slice(lines).filter((line) => line.path !== undefined);
    // Only the path: a query string may carry an address.
    expect(written.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'GET', path: '/users', status: 200 },
      { method: 'GET', path: '/users', status: 200 },
    ]);
    expect(JSON.stringify(written)).not.toContain('lin@example.com');
    expect((await counted()) - before).toBe(2);
  });
});
