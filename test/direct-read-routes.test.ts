// On the real server, GET /users/{id} reaches the handler through Bun.serve's `routes`
// (src/http/handler.ts, RequestHandler.routes), which hand over the id decoded and never build the
// request's URL. These tests hold every served answer to the same server's fetch handler, which Bun's
// router never sees (`server.fetch`), and check the log line, the metrics label and the refusals.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect } from 'node:net';
import { parseServeConfig } from '../src/cli/config';
import { serve } from '../src/cli/serve';
import { userPathKinds } from './support/user-paths';
import { UNMATCHED_ROUTE } from '../src/metrics/model';
import { parseSamples, sumOf } from './support/prom-text';
import { SECRET, STRONG_PASSWORD } from './support/harness';
import { tempDirsOfThisFile } from './support/server-process';

const tempDir = tempDirsOfThisFile();
const logs: Record<string, unknown>[] = [];
let served: Awaited<ReturnType<typeof serve>>;
let base = '';

beforeAll(async () => {
  const config = parseServeConfig(['--port', '0', '--dir', tempDir(), '--secret', SECRET, '--pwned-check', 'off'], {});
  served = await serve(config, (fields) => logs.push(fields));
  base = `http://127.0.0.1:${served.server.port}`;
});
afterAll(() => served.stop());

const headers = (auth: string | null): Record<string, string> => (auth === null ? {} : { authorization: auth });
/** Status, the headers Gatehouse sets (Bun adds date and content-length on the wire) and the body. */
async function summary(response: Response) {
  const kept = [...response.headers].filter(([name]) => name !== 'date' && name !== 'content-length');
  return { status: response.status, headers: Object.fromEntries(kept), body: await response.text() };
}
const overHttp = (method: string, path: string, auth: string | null = SECRET) => fetch(`${base}${path}`, { method, headers: headers(auth) }).then(summary);
async function viaFetchHandler(method: string, path: string, auth: string | null = SECRET) {
  const answer = await summary(await served.server.fetch(new Request(`${base}${path}`, { method, headers: headers(auth) })));
  return method === 'HEAD' ? { ...answer, body: '' } : answer;
}
async function createUser(): Promise<string> {
  const response = await fetch(`${base}/users`, { method: 'POST', headers: { ...headers(SECRET), 'content-type': 'application/json' }, body: JSON.stringify({ password: STRONG_PASSWORD }) });
  return ((await response.json()) as { id: string }).id;
}
/** GETs counted under the read's template and under `unmatched` so far (server-wide counters). */
async function requestCounts(): Promise<{ read: number; unmatched: number }> {
  const samples = parseSamples(await (await fetch(`${base}/metrics`, { headers: headers(SECRET) })).text());
  const count = (route: string) => sumOf(samples, 'gatehouse_http_requests_total', { method: 'GET', route });
  return { read: count('/users/:id'), unmatched: count(UNMATCHED_ROUTE) };
}
const accessLines = (path: string) => logs.filter((line) => line.path === path && line.status !== undefined);

describe('GET /users/{id} through Bun.serve routes', () => {
  test('answers every kind of path as the fetch handler does', async () => {
    const id = await createUser();
    const disabled = await createUser();
    expect((await fetch(`${base}/users/${disabled}/disable`, { method: 'POST', headers: { ...headers(SECRET), 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
    const paths = userPathKinds(id, disabled);
    for (const path of paths) {
      for (const method of ['GET', 'HEAD']) {
        expect({ path, method, ...(await overHttp(method, path)) }).toEqual({ path, method, ...(await viaFetchHandler(method, path)) });
      }
    }
    expect(JSON.parse((await overHttp('GET', `/users/${id}`)).body)).toMatchObject({ id, disabled: false });
    expect(JSON.parse((await overHttp('GET', `/users/${disabled}`)).body)).toMatchObject({ id: disabled, disabled: true });
  });

  test('logs the path as routed, and counts the read under its template', async () => {
    const id = await createUser();
    const escaped = `/users/%${id.charCodeAt(0).toString(16)}${id.slice(1)}`;
    const before = await requestCounts();
    logs.length = 0;
    expect((await overHttp('GET', `/users/${id}`)).status).toBe(200);
    expect((await overHttp('GET', escaped)).status).toBe(200);
    await viaFetchHandler('GET', escaped);
    // Bun's router decoded the escaped letter; the fetch handler, which reads the URL, keeps it.
    expect(accessLines(`/users/${id}`)).toHaveLength(2);
    expect(accessLines(escaped)).toHaveLength(1);
    expect(accessLines(`/users/${id}`)[0]).toMatchObject({ method: 'GET', status: 200, request_id: expect.any(String), ms: expect.any(Number) });
    // The counters are server-wide: exactly these three reads were added, each under the template.
    const after = await requestCounts();
    expect({ read: after.read - before.read, unmatched: after.unmatched - before.unmatched }).toEqual({ read: 3, unmatched: 0 });
  });

  test('asks for the credential first and checks the size limit', async () => {
    const id = await createUser();
    logs.length = 0;
    expect(await overHttp('GET', `/users/${id}`, null)).toMatchObject({ status: 401, body: '{"error":"NOT_AUTHENTICATED"}' });
    expect(await overHttp('GET', `/users/${id}`, `${SECRET}x`)).toMatchObject({ status: 401, body: '{"error":"NOT_AUTHENTICATED"}' });
    expect(accessLines(`/users/${id}`).map((line) => line.status)).toEqual([401, 401]);
    // fetch() sends no body with a GET: a socket announces one over the limit and sends none of it.
    const head = await rawRequest(`GET /users/${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${SECRET}\r\nContent-Length: ${65 * 1024}\r\n\r\n`);
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(head.endsWith('{"error":"PAYLOAD_TOO_LARGE"}')).toBe(true);
  });
});

describe('GET /users?email= through Bun.serve routes', () => {
  test('answers every kind of query string, and every other method on /users, as the fetch handler does', async () => {
    const email = `routes-${Date.now()}@example.com`;
    const response = await fetch(`${base}/users`, { method: 'POST', headers: { ...headers(SECRET), 'content-type': 'application/json' }, body: JSON.stringify({ password: STRONG_PASSWORD, email }) });
    expect(response.status).toBe(200);
    const queries = [`?email=${email}`, `?email=${email.toUpperCase()}`, '?email=nobody@example.com', '?email=', '?email=a%zz', `?email=${email}&page=2`, '?per_page=1', ''];
    for (const query of queries) {
      for (const method of ['GET', 'HEAD', 'DELETE', 'PUT']) {
        const path = `/users${query}`;
        expect({ path, method, ...(await overHttp(method, path)) }).toEqual({ path, method, ...(await viaFetchHandler(method, path)) });
      }
    }
    expect(JSON.parse((await overHttp('GET', `/users?email=${email}`)).body)).toHaveLength(1);
  });
});

/** The server's answer, once its body (of the Content-Length it announces) has arrived. */
function rawRequest(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(served.server.port), '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const length = /^content-length: (\d+)$/im.exec(head)?.[1];
      if (length !== undefined && body.length >= Number(length)) {
        socket.destroy();
        resolve(received);
      }
    });
    socket.on('error', reject);
  });
}
