// Service keys (API.md §17) through the real request path, in process: each scope kind allows exactly
// its operations, driven from the served document's operationIds, and FORBIDDEN comes right after the
// route is matched (before a missing user's 404 and before the body's INVALID_DATA).
import { describe, expect, test } from 'bun:test';
import { createHandler } from '../src/app';
import { defaultKey, digestOf, makeKey, type ServiceKey } from '../src/keys/model';
import { OPERATIONS } from '../src/keys/operations';
import { createKeyRing } from '../src/keys/service';
import { createHarness, SECRET } from './support/harness';

const h = createHarness({ relyingParty: { id: 'example.com', name: 'Example', origins: ['https://example.com'] } });
await h.ready;
const document = (await h.call('GET', '/docs/json')).json as { paths: Record<string, Record<string, { operationId: string; security?: unknown[]; responses: Record<string, unknown> }>> };

interface Operation {
  id: string;
  method: string;
  path: string;
  public: boolean;
}
const operations: Operation[] = Object.entries(document.paths).flatMap(([path, byMethod]) =>
  Object.entries(byMethod).map(([method, operation]) => ({
    id: operation.operationId,
    method: method.toUpperCase(),
    // No such user, request or passkey: a permitted operation answers 404 or 400, a refused one 403 first.
    path: path.replace(/\{[^}]+\}/g, 'nosuchthing2345678923456'),
    public: Array.isArray(operation.security) && operation.security.length === 0,
  })),
);

const key = (name: string, scope: string, secret = `${name}-key-0123456789abcdef`): [ServiceKey, string] => {
  const made = makeKey(name, scope, digestOf(secret));
  if (typeof made === 'string') throw new Error(made);
  return [made, secret];
};
const half = operations.filter((_, n) => n % 2 === 0).map((operation) => operation.id);
const [all, allSecret] = key('all', '*');
const [reader, readerSecret] = key('reader', 'read');
const [some, someSecret] = key('some', half.join(','));
const singles = operations.map((operation) => key(`only-${operation.id.toLowerCase()}`, operation.id));
const logs: Record<string, unknown>[] = [];
const ring = createKeyRing([all, reader, some, defaultKey(SECRET), ...singles.map(([made]) => made)]);
const handle = createHandler(h.app, h.services, { keys: ring, log: (line) => logs.push(line) });

async function send(operation: Operation, secret: string, method = operation.method) {
  const response = await handle(new Request(`http://localhost${operation.path}`, { method, headers: { authorization: secret }, body: method === 'GET' || method === 'HEAD' ? undefined : 'not json' }));
  const text = await response.text();
  // Metrics answer in Prometheus' text, HEAD with no body; every other error is JSON.
  return { status: response.status, error: response.status >= 400 && text !== '' ? (JSON.parse(text) as { error?: string }).error : undefined };
}

/** Which operations answer 403 FORBIDDEN for this key. */
async function forbiddenFor(secret: string, method?: (operation: Operation) => string): Promise<string[]> {
  const forbidden: string[] = [];
  for (const operation of operations) {
    const answer = await send(operation, secret, method?.(operation));
    expect({ id: operation.id, status: answer.status }).not.toEqual({ id: operation.id, status: 401 });
    if (answer.status === 403) {
      expect(answer.error).toBe('FORBIDDEN');
      forbidden.push(operation.id);
    }
  }
  return forbidden.sort();
}
const ids = (keep: (operation: Operation) => boolean) => operations.filter(keep).map((operation) => operation.id).sort();

describe('service key scopes (API.md §17)', () => {
  test('keys/operations.ts lists exactly the operations of the document, with their methods', () => {
    expect(Object.fromEntries(operations.map((operation) => [operation.id, operation.method]))).toEqual({ ...OPERATIONS });
    expect(operations.length).toBeGreaterThan(40);
  });

  test('* allows every operation', async () => {
    expect(await forbiddenFor(allSecret)).toEqual([]);
    expect(await forbiddenFor(SECRET)).toEqual([]);
  });

  test('read allows exactly the GET operations, and HEAD on them', async () => {
    expect(await forbiddenFor(readerSecret)).toEqual(ids((operation) => operation.method !== 'GET' && !operation.public));
    const gets = operations.filter((operation) => operation.method === 'GET');
    for (const operation of gets) expect({ id: operation.id, status: (await send(operation, readerSecret, 'HEAD')).status }).not.toEqual({ id: operation.id, status: 403 });
  });

  test('a list of operationIds allows exactly those (public ones stay open)', async () => {
    expect(await forbiddenFor(someSecret)).toEqual(ids((operation) => !half.includes(operation.id) && !operation.public));
  });

  test('a key of one operation allows it and nothing else', async () => {
    for (const [n, operation] of operations.entries()) {
      const secret = singles[n]![1];
      expect({ id: operation.id, status: (await send(operation, secret)).status }).not.toEqual({ id: operation.id, status: 403 });
      const other = operations[(n + 1) % operations.length]!;
      if (!other.public) expect({ id: other.id, error: (await send(other, secret)).error }).toEqual({ id: other.id, error: 'FORBIDDEN' });
    }
  });

  test('FORBIDDEN comes after the credential and the route, before the 404 of a missing user and the body check', async () => {
    const call = async (method: string, path: string, secret: string | null, body?: string) => {
      const response = await handle(new Request(`http://localhost${path}`, { method, headers: secret === null ? {} : { authorization: secret }, body }));
      return [response.status, ((await response.json()) as { error: string }).error];
    };
    expect(await call('DELETE', '/users/nosuchuser', readerSecret)).toEqual([403, 'FORBIDDEN']);
    expect(await call('DELETE', '/users/nosuchuser', allSecret)).toEqual([404, 'NOT_FOUND']);
    expect(await call('POST', '/users', readerSecret, '[1,2')).toEqual([403, 'FORBIDDEN']);
    expect(await call('POST', '/users', allSecret, '[1,2')).toEqual([400, 'INVALID_DATA']);
    // The direct read of GET /users/{id} checks the scope too.
    const [writer, writerSecret] = key('writer', 'createUser');
    ring.replace([writer, reader]);
    try {
      expect(await call('GET', '/users/nosuchuser', writerSecret)).toEqual([403, 'FORBIDDEN']);
      expect(await call('GET', '/users/nosuchuser', readerSecret)).toEqual([404, 'NOT_FOUND']);
      // An unknown route stays 404 for a known key, 401 for an unknown one.
      expect(await call('GET', '/no/such/route', writerSecret)).toEqual([404, 'NOT_FOUND']);
      expect(await call('GET', '/no/such/route', allSecret)).toEqual([401, 'NOT_AUTHENTICATED']);
      expect(await call('GET', '/users/nosuchuser', null)).toEqual([401, 'NOT_AUTHENTICATED']);
    } finally {
      ring.replace([all, reader, some, defaultKey(SECRET), ...singles.map(([made]) => made)]);
    }
  });

  test('the 403 of the direct read and of the routed read are the same answer, line and metric label', async () => {
    const [writer, writerSecret] = key('writer', 'createUser');
    const lines: Record<string, unknown>[] = [];
    const writerHandle = createHandler(h.app, h.services, { keys: createKeyRing([writer]), log: (line) => lines.push(line) });
    const direct = await writerHandle(new Request('http://localhost/users/abc', { headers: { authorization: writerSecret } }));
    const routed = await writerHandle(new Request('http://localhost/users/%61bc', { headers: { authorization: writerSecret } }));
    expect([direct.status, await direct.text(), Object.fromEntries(direct.headers)]).toEqual([routed.status, await routed.text(), Object.fromEntries(routed.headers)]);
    expect(lines.map(({ time, request_id, ms, ...rest }) => rest)).toEqual([
      { method: 'GET', path: '/users/abc', status: 403, key: 'writer' },
      { method: 'GET', path: '/users/%61bc', status: 403, key: 'writer' },
    ]);
    const metrics = await h.services.metrics!.render();
    expect(metrics).toMatch(/gatehouse_http_requests_total\{method="GET",route="\/users\/:id",status="403"\} [1-9]/);
  });

  test('the access line names the key, the metrics count requests by key, and no key is ever logged', async () => {
    logs.length = 0;
    const before = await h.services.metrics!.render();
    const countOf = (text: string, name: string) => Number(new RegExp(`gatehouse_requests_by_key_total\\{key="${name}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    const user = operations.find((operation) => operation.id === 'getUser')!;
    await send(user, readerSecret);
    await send(user, readerSecret);
    await send(operations.find((operation) => operation.id === 'deleteUser')!, readerSecret);
    await send(user, 'no-such-key-0123456789');
    expect(logs.map((line) => [line.status, line.key])).toEqual([[404, 'reader'], [404, 'reader'], [403, 'reader'], [401, null]]);
    const after = await h.services.metrics!.render();
    expect(countOf(after, 'reader') - countOf(before, 'reader')).toBe(3);
    const written = JSON.stringify(logs);
    for (const secret of [allSecret, readerSecret, someSecret, SECRET, 'no-such-key-0123456789']) expect(written).not.toContain(secret);
  });

  test("every event names the key of the request that caused it, also among parallel requests committed together", async () => {
    const [first, firstSecret] = key('writer-a', 'createUser,deleteUser');
    const [second, secondSecret] = key('writer-b', 'createUser,deleteUser');
    const writers = createHandler(h.app, h.services, { keys: createKeyRing([first, second, all]), log: () => {} });
    const post = (secret: string, n: number) =>
      writers(new Request('http://localhost/users', { method: 'POST', headers: { authorization: secret }, body: JSON.stringify({ email: `actor-${n}@example.com`, password: 'actor test password 1' }) }));
    const secrets = Array.from({ length: 16 }, (_, n) => (n % 2 === 0 ? firstSecret : secondSecret));
    const created = await Promise.all(secrets.map(async (secret, n) => ((await (await post(secret, n)).json()) as { id: string }).id));
    const events = await (await writers(new Request('http://localhost/events?type=user.created&limit=1000', { headers: { authorization: allSecret } }))).json() as { user_id: string; actor: string | null }[];
    const actorOf = new Map(events.map((event) => [event.user_id, event.actor]));
    expect(created.map((id) => actorOf.get(id))).toEqual(secrets.map((secret) => (secret === firstSecret ? 'writer-a' : 'writer-b')));
    // 16 argon2 hashes on a shared machine.
  }, 60_000);
});
