// GET /users/{id} is answered by the outer handler without Elysia's router (src/http/handler.ts,
// DirectRead). These tests hold it to the routed answer: same status, body and headers for every kind
// of path, the same log line and metrics label, the same 500 on an unexpected failure.
import { describe, expect, test } from 'bun:test';
import { createRequestHandler } from '../src/http/handler';
import { defaultKey } from '../src/keys/model';
import { createKeyRing } from '../src/keys/service';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { SETUP } from './support/setups';
import { userPathKinds } from './support/user-paths';

const h = createHarness();
const secretOnly = createKeyRing([defaultKey(SECRET)]);

/** The same instance's app behind a handler with no direct reads: every request routed by Elysia. */
function routedOnly() {
  const instance = h.instances[0]!;
  return createRequestHandler({ findCaller: secretOnly.find, log: () => {}, route: (request) => instance.app.handle(request), docs: true });
}

async function answerOf(handle: (request: Request) => Response | Promise<Response>, method: string, path: string, auth: string | null = SECRET) {
  const response = await handle(new Request(`http://localhost${path}`, { method, headers: auth === null ? {} : { authorization: auth } }));
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

describe(`GET /users/{id} without the router (${SETUP})`, () => {
  test('answers every kind of path exactly as the routed request does', async () => {
    await h.ready;
    const plain = await h.createUser({ email: 'direct@example.com' });
    const disabled = await h.createUser();
    expect((await h.call('POST', `/users/${disabled.id}/disable`, { body: {} })).status).toBe(200);
    const routed = routedOnly();
    const direct = h.instances[0]!.handle;
    const paths = userPathKinds(plain.id, disabled.id);
    for (const path of paths) {
      for (const method of ['GET', 'HEAD']) {
        expect({ path, method, ...(await answerOf(direct, method, path)) }).toEqual({ path, method, ...(await answerOf(routed, method, path)) });
      }
    }
    // The escaped first letter is the same id to the router: the direct path hands it on rather than miss it.
    expect((await answerOf(direct, 'GET', paths[5]!)).status).toBe(200);
    expect(JSON.parse((await answerOf(direct, 'GET', paths[0]!)).body)).toMatchObject({ id: plain.id, email: 'direct@example.com', disabled: false });
    expect(JSON.parse((await answerOf(direct, 'GET', paths[1]!)).body)).toMatchObject({ id: disabled.id, disabled: true });
  });

  test('still asks for the credential first and checks the size limit', async () => {
    const user = await h.createUser();
    expect((await h.call('GET', `/users/${user.id}`, { auth: null })).json).toEqual({ error: 'NOT_AUTHENTICATED' });
    expect((await h.call('GET', `/users/${user.id}`, { auth: `${SECRET}x` })).json).toEqual({ error: 'NOT_AUTHENTICATED' });
    const big = await h.call('GET', `/users/${user.id}`, { headers: { 'content-length': String(65 * 1024) }, rawBody: 'x' });
    expect({ status: big.status, json: big.json }).toEqual({ status: 413, json: { error: 'PAYLOAD_TOO_LARGE' } });
  });

  test('writes the access line and counts the request under the route template', async () => {
    const user = await h.createUser();
    const before = h.logs.length;
    const first = h.instances[0]!.handle;
    expect((await answerOf(first, 'GET', `/users/${user.id}`)).status).toBe(200);
    expect((await answerOf(first, 'GET', '/users/nosuchuser000000000000000')).status).toBe(404);
    const lines = h.logs.slice(before).filter((line) => line.path !== undefined);
    expect(lines.map(({ method, path, status }) => ({ method, path, status }))).toEqual([
      { method: 'GET', path: `/users/${user.id}`, status: 200 },
      { method: 'GET', path: '/users/nosuchuser000000000000000', status: 404 },
    ]);
    for (const line of lines) {
      expect(typeof line.request_id).toBe('string');
      expect(typeof line.ms).toBe('number');
    }
    const metrics = (await h.callEach('GET', '/metrics'))[0]!;
    expect(metrics).toMatch(/gatehouse_http_requests_total\{method="GET",route="\/users\/:id",status="200"\} [1-9]/);
    expect(metrics).toMatch(/gatehouse_http_requests_total\{method="GET",route="\/users\/:id",status="404"\} [1-9]/);
    expect(metrics).not.toContain('nosuchuser');
  });

  test('an unexpected failure is UNKNOWN_ERROR, logged with the request id and without its message', async () => {
    const user = await h.createUser();
    const users = h.services.users;
    const view = users.view;
    const failures: (() => never | Promise<never>)[] = [
      () => {
        throw new TypeError('not a function');
      },
      () => Promise.reject(Object.assign(new Error(`query failed: ${STRONG_PASSWORD}`), { params: [STRONG_PASSWORD] })),
    ];
    try {
      for (const fail of failures) {
        users.view = fail;
        const before = h.logs.length;
        const res = await h.instances[0]!.handle(new Request(`http://localhost/users/${user.id}`, { headers: { authorization: SECRET } }));
        expect({ status: res.status, body: await res.json(), nosniff: res.headers.get('x-content-type-options') }).toEqual({
          status: 500,
          body: { error: 'UNKNOWN_ERROR' },
          nosniff: 'nosniff',
        });
        const lines = h.logs.slice(before);
        const failure = lines.find((line) => line.level === 'error');
        const access = lines.find((line) => line.path === `/users/${user.id}`);
        expect(failure?.request_id).toBe(access?.request_id);
        expect(failure?.error).toBe(fail === failures[0] ? 'TypeError' : 'Error');
        expect(JSON.stringify(lines)).not.toContain(STRONG_PASSWORD);
      }
    } finally {
      users.view = view;
    }
  });
});

describe('the direct read in the outer handler', () => {
  test('serves GETs of plain ids itself and hands every other request to the router', async () => {
    const routed: string[] = [];
    const read: string[] = [];
    const handle = createRequestHandler({
      findCaller: secretOnly.find,
      log: () => {},
      docs: false,
      route: (request) => {
        routed.push(`${request.method} ${new URL(request.url).pathname}`);
        return new Response('routed');
      },
      directReads: [{ prefix: '/users/', template: '/users/:id', operationId: 'getUser', answer: (id) => (read.push(id), new Response('direct')) }],
    });
    const send = async (method: string, path: string) =>
      (await handle(new Request(`http://localhost${path}`, { method, headers: { authorization: SECRET } }))).text();
    expect(await send('GET', '/users/abc123')).toBe('direct');
    expect(await send('GET', '/users/abc123?x=1')).toBe('direct');
    for (const [method, path] of [['HEAD', '/users/abc123'], ['DELETE', '/users/abc123'], ['GET', '/users/%61bc'], ['GET', '/users/abc/'], ['GET', '/users/'], ['GET', '/users']]) {
      expect(await send(method!, path!)).toBe('routed');
    }
    expect(read).toEqual(['abc123', 'abc123']);
    expect(routed).toEqual(['HEAD /users/abc123', 'DELETE /users/abc123', 'GET /users/%61bc', 'GET /users/abc/', 'GET /users/', 'GET /users']);
  });
});
