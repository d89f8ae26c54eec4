import { describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { t } from 'elysia';
import { parseServeConfig } from '../src/cli/config';
import { serve } from '../src/cli/serve';
import { type App, createApp, createHandler } from '../src/app';
import { createHarness, expectError, type Harness, SECRET, STRONG_PASSWORD, WEAK_PASSWORD } from './support/harness';

const TEN_SECONDS = 10_000;
const INVALID_DATA_BODY = '{"error":"INVALID_DATA"}';

/** Sends exactly these bytes and headers, without the harness's JSON encoding. */
async function sendRaw(h: Harness, method: string, path: string, init: { body?: RequestInit['body']; headers?: Record<string, string> } = {}) {
  const headers = { authorization: SECRET, ...init.headers };
  const response = await h.handle(new Request(`http://localhost${path}`, { method, headers, body: init.body, duplex: 'half' } as RequestInit));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const bytes = (text: string) => new TextEncoder().encode(text);

/** A body streamed in 1 KiB chunks, so the request has no Content-Length. */
function streamedBody(totalBytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(1024, totalBytes - sent);
      sent += size;
      controller.enqueue(bytes(' '.repeat(size)));
    },
  });
}

describe('credential guard', () => {
  const h = createHarness();

  test.each([
    ['missing', null],
    ['wrong', 'not-the-secret-0123456'],
    ['empty', ''],
    ['a prefix of the secret', SECRET.slice(0, -1)],
    ['the secret plus a character', `${SECRET}x`],
    ['with a Bearer scheme', `Bearer ${SECRET}`],
    ['in another case', SECRET.toUpperCase()],
  ])('%s credential → 401 NOT_AUTHENTICATED', async (_, auth) => {
    for (const [method, path] of [['GET', '/users'], ['POST', '/users'], ['GET', '/'], ['DELETE', '/users/x']] as const) {
      const res = await h.call(method, path, { auth, body: method === 'POST' ? { password: STRONG_PASSWORD } : undefined });
      expect(res.status).toBe(401);
      expect(res.text).toBe('{"error":"NOT_AUTHENTICATED"}');
      expect(res.headers.get('content-type')).toStartWith('application/json');
    }
  });

  test('the right credential is accepted', async () => {
    const res = await h.call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ name: 'gatehouse', version: expect.any(String) });
  });

  test('a refused request creates nothing', async () => {
    await h.call('POST', '/users', { auth: 'wrong', body: { password: STRONG_PASSWORD } });
    const list = await h.call('GET', '/users');
    expect(list.headers.get('x-pagination-total')).toBe('0');
  });

  test('GET /health needs no credential', async () => {
    const res = await h.call('GET', '/health', { auth: null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ok' });
  });

  test('only GET of the health check and the docs skips the credential', async () => {
    for (const [method, path] of [['POST', '/health'], ['DELETE', '/docs'], ['GET', '/docs/nonexistent'], ['POST', '/docs/json']] as const) {
      expectError(await h.call(method, path, { auth: null }), 401, 'NOT_AUTHENTICATED');
    }
    expect((await h.call('GET', '/docs/json', { auth: null })).status).toBe(200);
    const withoutDocs = createHandler(createApp(h.services, { docs: false }), h.services, { secret: SECRET, log: h.platform.log, docs: false });
    expect((await withoutDocs(new Request('http://localhost/docs'))).status).toBe(401);
  });

  test.each(['x', 'ab', 'abc', 'x:1'])('a short Host (%s) cannot route a public path to a private one', async (host) => {
    const user = await h.createUser();
    // Elysia looks for the path from index 11; with a short host that lands inside the query string.
    for (const path of ['/health?/users', `/health?/users/${user.id}`]) {
      const res = await h.handle(new Request(`http://${host}${path}`));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok' });
    }
    const deleted = await h.handle(new Request(`http://${host}/health?/users/${user.id}`, { method: 'DELETE' }));
    expectError({ status: deleted.status, json: await deleted.json() }, 401, 'NOT_AUTHENTICATED');
    const own = await h.handle(new Request(`http://${host}/users/${user.id}`, { headers: { authorization: SECRET } }));
    expect(((await own.json()) as { id: string }).id).toBe(user.id);
  });

  test('an unknown path is 401 without the credential and 404 NOT_FOUND with it', async () => {
    expectError(await h.call('GET', '/no/such/path', { auth: null }), 401, 'NOT_AUTHENTICATED');
    expectError(await h.call('GET', '/no/such/path'), 404, 'NOT_FOUND');
    expectError(await h.call('GET', '/healthz', { auth: null }), 401, 'NOT_AUTHENTICATED');
  });

  test.each([
    ['PATCH', '/users'],
    ['PUT', '/users'],
    ['PUT', '/users/abc'],
    ['POST', '/users/abc'],
    ['GET', '/users/abc/verify-password'],
    ['DELETE', '/authenticate/password'],
  ])('unknown method %s on the known path %s → 404 NOT_FOUND', async (method, path) => {
    const res = await h.call(method, path);
    expectError(res, 404, 'NOT_FOUND');
    expect(res.headers.get('content-type')).toStartWith('application/json');
  });

  test('an oversized body without the credential is 401, not 413', async () => {
    const res = await h.call('POST', '/users', { auth: null, rawBody: 'x'.repeat(100_000) });
    expectError(res, 401, 'NOT_AUTHENTICATED');
    const streamed = await sendRaw(h, 'POST', '/users', { body: streamedBody(100_000), headers: { authorization: 'wrong' } });
    expect(streamed.status).toBe(401);
  });
});

describe('lenient JSON bodies', () => {
  const h = createHarness();
  const body = JSON.stringify({ password: STRONG_PASSWORD });

  test.each([
    ['no Content-Type', undefined],
    ['application/json', 'application/json'],
    ['application/json with charset', 'application/json; charset=utf-8'],
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/octet-stream', 'application/octet-stream'],
  ])('a JSON body with %s is parsed', async (_, contentType) => {
    const user = await h.createUser();
    const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
    // Bytes rather than a string, so that nothing adds a Content-Type on the way.
    const res = await sendRaw(h, 'POST', `/users/${user.id}/verify-password`, { body: bytes(body), headers });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  test('an empty body is {}: accepted where nothing is required, INVALID_DATA where a field is', async () => {
    for (const empty of ['', '   ', '\n']) {
      const res = await sendRaw(h, 'POST', '/users', { body: bytes(empty) });
      expect(res.status).toBe(400);
      expect(res.text).toBe(INVALID_DATA_BODY);
    }
    const none = await sendRaw(h, 'POST', '/users');
    expect(none.text).toBe(INVALID_DATA_BODY);
  });
});

describe('malformed bodies → 400 INVALID_DATA', () => {
  const h = createHarness();
  let userId = '';
  const getUserId = async () => (userId ||= (await h.createUser()).id);

  const rawCases: [string, string][] = [
    ['not JSON', 'not json'],
    ['truncated JSON', `{"password":"${STRONG_PASSWORD}"`],
    ['a trailing comma', `{"password":"${STRONG_PASSWORD}",}`],
    ['single-quoted JSON', `{'password':'${STRONG_PASSWORD}'}`],
    ['a JSON array', `[{"password":"${STRONG_PASSWORD}"}]`],
    ['an empty JSON array', '[]'],
    ['a JSON string', `"${STRONG_PASSWORD}"`],
    ['a JSON number', '42'],
    ['JSON null', 'null'],
    ['JSON true', 'true'],
    ['JSON false', 'false'],
    ['form encoding', `password=${encodeURIComponent(STRONG_PASSWORD)}`],
  ];

  const fieldCases: [string, Record<string, unknown>][] = [
    ['password as a number', { password: 12345678 }],
    ['password as an array', { password: [STRONG_PASSWORD] }],
    ['password as an object', { password: { value: STRONG_PASSWORD } }],
    ['password as null', { password: null }],
    ['password as a boolean', { password: true }],
    ['password missing', { client_ip: '203.0.113.1' }],
    ['client_ip of 65 characters', { password: STRONG_PASSWORD, client_ip: '1'.repeat(65) }],
    ['client_ip as a number', { password: STRONG_PASSWORD, client_ip: 2130706433 }],
    ['client_ip as an array', { password: STRONG_PASSWORD, client_ip: ['203.0.113.1'] }],
    ['client_ip as a boolean', { password: STRONG_PASSWORD, client_ip: false }],
  ];

  const expectInvalidData = (res: { status: number; headers: Headers; text: string }) => {
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.text).toBe(INVALID_DATA_BODY);
  };

  for (const contentType of ['application/json', 'text/plain']) {
    test.each(rawCases)(`%s (${contentType}) on POST /users and verify-password`, async (_, raw) => {
      expectInvalidData(await sendRaw(h, 'POST', '/users', { body: bytes(raw), headers: { 'content-type': contentType } }));
      const id = await getUserId();
      expectInvalidData(await sendRaw(h, 'POST', `/users/${id}/verify-password`, { body: bytes(raw), headers: { 'content-type': contentType } }));
    });
  }

  test.each(fieldCases)('%s on POST /users and verify-password', async (_, body) => {
    expectInvalidData(await sendRaw(h, 'POST', '/users', { body: JSON.stringify(body) }));
    const id = await getUserId();
    expectInvalidData(await sendRaw(h, 'POST', `/users/${id}/verify-password`, { body: JSON.stringify(body) }));
  });

  test('none of them created a user', async () => {
    const list = await h.call('GET', '/users');
    expect(list.json).toHaveLength(userId ? 1 : 0);
  });

  test('client_ip of exactly 64 characters is accepted', async () => {
    const res = await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, client_ip: 'a'.repeat(64) } });
    expect(res.status).toBe(200);
  });

  test('unknown fields are ignored and not echoed', async () => {
    const res = await h.call('POST', '/users', {
      body: { password: STRONG_PASSWORD, is_admin: true, id: 'chosen-id', nested: { deep: [1, 2] } },
    });
    expect(res.status).toBe(200);
    expect(res.json.id).not.toBe('chosen-id');
    expect(Object.keys(res.json).sort()).toEqual(['created_at', 'disabled', 'disabled_until', 'email', 'email_verified', 'id', 'passkey_count', 'recovery_code', 'registered_totp']);
    const verify = await h.call('POST', `/users/${res.json.id}/verify-password`, { body: { password: STRONG_PASSWORD, extra: 'x' } });
    expect(verify.status).toBe(204);
  });
});

describe('lengths count characters, and a lone surrogate is no character', () => {
  test('client_ip and email count code points; passwords, emails and client_ip with a lone surrogate are INVALID_DATA', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const verify = (body: Record<string, unknown>) => h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD, ...body } });
    expect((await verify({ client_ip: '😀'.repeat(40) })).status).toBe(204);
    expectError(await verify({ client_ip: '😀'.repeat(65) }), 400, 'INVALID_DATA');
    expectError(await verify({ client_ip: 'abc\ud800' }), 400, 'INVALID_DATA');
    // Hashed as given, a lone surrogate would become U+FFFD and match any other one.
    expectError(await verify({ password: 'abcdefg\ud800' }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/users', { body: { password: 'abcdefg\udbff' } }), 400, 'INVALID_DATA');
    expect((await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email: `${'é'.repeat(240)}@x.co` } })).status).toBe(200);
    expectError(await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email: `${'é'.repeat(251)}@x.co` } }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email: 'a\ud800@x.co' } }), 400, 'INVALID_DATA');
  });
});

describe('client_ip "" and null mean absent', () => {
  test.each([
    ['""', ''],
    ['null', null],
  ])('client_ip %s applies no address limit, even after many calls', async (_, clientIp) => {
    const h = createHarness();
    // A weak password fails after the rate limit step, so each call would spend a token if one applied.
    for (let i = 0; i < 12; i++) {
      expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: clientIp } }), 400, 'WEAK_PASSWORD');
    }
    const created = await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, client_ip: clientIp } });
    expect(created.status).toBe(200);
    // The same number of calls with a real address is limited, so the loop above would have been too.
    for (let i = 0; i < 5; i++) await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '203.0.113.9' } });
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '203.0.113.9' } }), 400, 'TOO_MANY_REQUESTS');
  });
});

describe('body size limit', () => {
  const h = createHarness();
  /** A JSON object of exactly `size` bytes whose padding is an ignored field. */
  const jsonOfSize = (size: number) => {
    const base = JSON.stringify({ password: WEAK_PASSWORD, padding: '' });
    return JSON.stringify({ password: WEAK_PASSWORD, padding: 'p'.repeat(size - base.length) });
  };

  test('a body of exactly 64 KiB is accepted, one byte more is 413 PAYLOAD_TOO_LARGE (with Content-Length)', async () => {
    expect(jsonOfSize(65536)).toHaveLength(65536);
    const atLimit = await sendRaw(h, 'POST', '/users', { body: jsonOfSize(65536) });
    expect(atLimit.text).toBe('{"error":"WEAK_PASSWORD"}');
    const over = await sendRaw(h, 'POST', '/users', { body: jsonOfSize(65537) });
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toBe('application/json');
    expect(over.text).toBe('{"error":"PAYLOAD_TOO_LARGE"}');
  });

  test('a streamed body without Content-Length is cut off at 64 KiB', async () => {
    const over = await sendRaw(h, 'POST', '/users', { body: streamedBody(65537) });
    expect(over.status).toBe(413);
    expect(over.text).toBe('{"error":"PAYLOAD_TOO_LARGE"}');
    const huge = await sendRaw(h, 'POST', '/users', { body: streamedBody(5 * 1024 * 1024) });
    expect(huge.text).toBe('{"error":"PAYLOAD_TOO_LARGE"}');
  });

  test('a streamed body within the limit is parsed', async () => {
    const text = jsonOfSize(60000);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes(text.slice(0, 30000)));
        controller.enqueue(bytes(text.slice(30000)));
        controller.close();
      },
    });
    const res = await sendRaw(h, 'POST', '/users', { body: stream });
    expect(res.text).toBe('{"error":"WEAK_PASSWORD"}');
  });

  test('413 also on endpoints with a path user and on unknown paths', async () => {
    const user = await h.createUser();
    const res = await sendRaw(h, 'POST', `/users/${user.id}/verify-password`, { body: jsonOfSize(70000) });
    expect(res.status).toBe(413);
  });
});

describe('unexpected failures → 500 UNKNOWN_ERROR', () => {
  test('a throwing dependency gives a bare UNKNOWN_ERROR and a logged request id', async () => {
    const h = createHarness({ breach: { isBreached: async () => { throw new Error('breach checker exploded at /secret/path'); } } });
    const res = await h.call('POST', '/users', { body: { password: STRONG_PASSWORD } });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.text).toBe('{"error":"UNKNOWN_ERROR"}');
    const errorLine = h.logs.find((line) => line.level === 'error');
    const accessLine = h.logs.find((line) => line.method === 'POST' && line.status === 500);
    expect(errorLine?.request_id).toMatch(/^[a-z2-9]{8}-[0-9a-z]+$/);
    expect(errorLine?.request_id).toBe(accessLine?.request_id as string);
    expect(JSON.stringify(errorLine)).not.toContain(STRONG_PASSWORD);
  });

  test("an error escaping the served handler is a bare UNKNOWN_ERROR: never Bun's development page", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-escaped-'));
    const logs: Record<string, unknown>[] = [];
    const { server, stop } = await serve(parseServeConfig(['--port', '0', '--dir', dir, '--secret', SECRET, '--pwned-check', 'off'], {}), (fields) => logs.push(fields));
    try {
      // Without NODE_ENV=production Bun would otherwise be in development mode.
      expect(server.development).toBe(false);
      // The request handler catches its own failures; a fetch that throws stands in for one that would not (GET / is no Bun route: it reaches fetch).
      server.reload({ fetch: () => { throw new TypeError('escaped the handler'); } } as Parameters<typeof server.reload>[0]);
      const response = await fetch(`http://127.0.0.1:${server.port}/`, { headers: { authorization: SECRET } });
      expect(response.status).toBe(500);
      expect(await response.text()).toBe('{"error":"UNKNOWN_ERROR"}');
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(logs.find((line) => line.level === 'error')).toMatchObject({ error: 'TypeError', detail: 'escaped the handler' });
    } finally {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // SQLite's file closed under the app is our bug (500); a PostgreSQL pool that is gone is the database being unavailable (503, API.md §10).
  test('a closed database gives UNKNOWN_ERROR (SQLite) or UNAVAILABLE (PostgreSQL) on GET /users, and 503 on /health', async () => {
    const h = createHarness();
    await h.ready;
    const { backend } = h;
    if (backend.kind === 'sqlite') backend.db.$client.close();
    else for (const instance of h.instances) await instance.close();
    const res = await h.call('GET', '/users');
    if (backend.kind === 'sqlite') {
      expect(res.status).toBe(500);
      expect(res.text).toBe('{"error":"UNKNOWN_ERROR"}');
      expect(h.logs.some((line) => line.level === 'error' && typeof line.request_id === 'string')).toBe(true);
    } else {
      expect(res.status).toBe(503);
      expect(res.text).toBe('{"error":"UNAVAILABLE"}');
    }
    const health = await h.call('GET', '/health', { auth: null });
    expect(health.status).toBe(503);
  });

  test('a response that breaks its own schema is UNKNOWN_ERROR, not the caller\'s INVALID_DATA', async () => {
    const h = createHarness();
    await h.ready;
    const app = createApp(h.services).get('/broken', () => ({ wrong: 1 }) as unknown as { name: string }, {
      response: { 200: t.Object({ name: t.String() }) },
    });
    const response = await createHandler(app as unknown as App, h.services, { secret: SECRET, log: h.platform.log })(
      new Request('http://localhost/broken', { headers: { authorization: SECRET } }),
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: 'UNKNOWN_ERROR' });
  });
});

describe('Retry-After on every TOO_MANY_REQUESTS', () => {
  test('each endpoint that takes client_ip answers TOO_MANY_REQUESTS with Retry-After', async () => {
    const h = createHarness();
    const user = await h.createUser();
    // Five wrong passwords also start the login block: the longer wait of the two is named (API.md §2).
    // Each endpoint's own answer for the first five (the ones the limit lets through).
    const calls: [string, Record<string, unknown>, string, string][] = [
      ['/users', { password: WEAK_PASSWORD }, 'WEAK_PASSWORD', '10'],
      [`/users/${user.id}/verify-password`, { password: 'wrong password' }, 'INCORRECT_PASSWORD', '900'],
      [`/users/${user.id}/update-password`, { password: 'wrong password', new_password: 'another long passphrase' }, 'INCORRECT_PASSWORD', '900'],
      ['/authenticate/password', { email: 'nobody@example.com', password: 'wrong password' }, 'NOT_FOUND', '900'],
    ];
    for (const [index, [path, body, before, retryAfter]] of calls.entries()) {
      // One address per endpoint: wrong passwords from one address would also trip the login block.
      const ip = `198.51.100.${20 + index}`;
      for (let i = 0; i < 5; i++) expect({ path, i, error: (await h.call('POST', path, { body: { ...body, client_ip: ip } })).json.error }).toEqual({ path, i, error: before });
      const limited = await h.call('POST', path, { body: { ...body, client_ip: ip } });
      expectError(limited, 400, 'TOO_MANY_REQUESTS');
      expect({ path, retryAfter: limited.headers.get('retry-after') }).toEqual({ path, retryAfter });
      expect(limited.text).toBe('{"error":"TOO_MANY_REQUESTS"}');
    }
  });

  test('Retry-After counts down with the clock', async () => {
    const h = createHarness();
    for (let i = 0; i < 5; i++) await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '198.51.100.21' } });
    h.advance(3_500);
    const limited = await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '198.51.100.21' } });
    expect(limited.headers.get('retry-after')).toBe('7');
  });

  test('no Retry-After on other errors', async () => {
    const h = createHarness();
    const res = await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: '198.51.100.22' } });
    expectError(res, 400, 'WEAK_PASSWORD');
    expect(res.headers.get('retry-after')).toBeNull();
  });
});

describe('access log', () => {
  test('one line per request with method, path and status, and nothing sensitive', async () => {
    const h = createHarness();
    const email = 'logged.person@example.com';
    const user = await h.createUser({ email });
    await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'a wrong password', client_ip: '192.0.2.77' } });
    await h.call('GET', '/users?email_query=logged.person&per_page=5');
    await h.call('GET', '/users', { auth: 'guessed-credential-value' });
    await h.call('GET', '/missing');
    await h.call('POST', '/users', { rawBody: 'x'.repeat(70_000) });
    await h.call('GET', '/health', { auth: null });

    const access = h.logs.filter((line) => 'method' in line);
    expect(access.map((line) => [line.method, line.path, line.status])).toEqual([
      ['POST', '/users', 200],
      ['POST', `/users/${user.id}/verify-password`, 400],
      ['GET', '/users', 200],
      ['GET', '/users', 401],
      ['GET', '/missing', 404],
      ['POST', '/users', 413],
      ['GET', '/health', 200],
    ]);
    for (const line of access) expect(line.request_id).toMatch(/^[a-z2-9]{8}-[0-9a-z]+$/);
    expect(new Set(access.map((line) => line.request_id)).size).toBe(access.length);

    const everything = JSON.stringify(h.logs);
    for (const sensitive of [SECRET, STRONG_PASSWORD, 'a wrong password', 'guessed-credential-value', user.recovery_code, email, 'logged.person', 'email_query', 'per_page', '192.0.2.77', 'xxxxxxxx']) {
      expect(everything).not.toContain(sensitive);
    }
  });
});

describe('order of checks', () => {
  test('unknown user + bad body → 404 NOT_FOUND', async () => {
    const h = createHarness();
    for (const path of ['/users/nosuchuser/verify-password', '/users/nosuchuser/update-password']) {
      expectError(await h.call('POST', path, { rawBody: 'not json' }), 404, 'NOT_FOUND');
      expectError(await h.call('POST', path, { body: { password: 1 } }), 404, 'NOT_FOUND');
      expectError(await h.call('POST', path, { body: {} }), 404, 'NOT_FOUND');
    }
  });

  test('bad body + rate-limited address → INVALID_DATA, and no token is spent', async () => {
    const h = createHarness();
    const ip = '198.51.100.30';
    for (let i = 0; i < 4; i++) expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: ip } }), 400, 'WEAK_PASSWORD');
    for (let i = 0; i < 5; i++) expectError(await h.call('POST', '/users', { body: { password: 'short', client_ip: ip } }), 400, 'INVALID_DATA');
    // The fifth token is still there.
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: ip } }), 400, 'WEAK_PASSWORD');
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: ip } }), 400, 'TOO_MANY_REQUESTS');
    // Now exhausted: a bad body still reports INVALID_DATA.
    expectError(await h.call('POST', '/users', { body: { password: 'short', client_ip: ip } }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/users', { rawBody: `{"password":` }), 400, 'INVALID_DATA');
  });

  test('rate-limited + weak password → TOO_MANY_REQUESTS', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const ip = '198.51.100.31';
    for (let i = 0; i < 5; i++) await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: ip } });
    expectError(await h.call('POST', '/users', { body: { password: WEAK_PASSWORD, client_ip: ip } }), 400, 'TOO_MANY_REQUESTS');
    const update = await h.call('POST', `/users/${user.id}/update-password`, {
      body: { password: 'a wrong password', new_password: WEAK_PASSWORD, client_ip: ip },
    });
    expectError(update, 400, 'TOO_MANY_REQUESTS');
  });

  test('weak new password + wrong current password → WEAK_PASSWORD, and it is not counted as a failure', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const ip = '198.51.100.32';
    for (let i = 0; i < 6; i++) {
      h.advance(TEN_SECONDS);
      const res = await h.call('POST', `/users/${user.id}/update-password`, {
        body: { password: 'a wrong password', new_password: WEAK_PASSWORD, client_ip: ip },
      });
      expectError(res, 400, 'WEAK_PASSWORD');
    }
    h.advance(TEN_SECONDS);
    const verify = await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD, client_ip: ip } });
    expect(verify.status).toBe(204);
  });

  test('invalid data is not counted toward the login block', async () => {
    const h = createHarness();
    const user = await h.createUser();
    const ip = '198.51.100.33';
    for (let i = 0; i < 6; i++) {
      expectError(await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'short', client_ip: ip } }), 400, 'INVALID_DATA');
    }
    expect((await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD, client_ip: ip } })).status).toBe(204);
  });
});
