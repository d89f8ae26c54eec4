// API.md §10: an outage of either engine never yields a 500. Every operation of the published
// document, sent as a valid request made from the document itself, to a real server process on
// PostgreSQL and Redis: with PostgreSQL stopped each answers 503 UNAVAILABLE; with Redis stopped each
// answers as usual (per-process limits), never 5xx.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { bodyRefusal, documentRules } from './fuzz/document';
import { STRONG_PASSWORD } from './support/constants';
import { postgresForThisFile } from './support/postgres';
import { redisForThisFile } from './support/redis';
import { killAllServers, startServer, type ServerProcess } from './support/server-process';

const pg = await postgresForThisFile('every operation through outages');
const redis = await redisForThisFile('every operation through outages');
const skip = pg.skip || redis.skip;

type Schema = { examples?: unknown[]; properties?: Record<string, Schema>; required?: string[]; type?: unknown; enum?: unknown[] };
interface Operation {
  operationId: string;
  method: string;
  path: string;
  body: Schema | undefined;
}

/** The one operation that reads nothing stored: the service's own description. */
const WITHOUT_DATABASE = new Set(['getServiceInfo']);

let server: ServerProcess;
let document: any;
let operations: Operation[];
const ids = { user: '', other: '' };

/** A value the schema accepts, from the document's own examples (the whole object's first, else each required field's). */
function valueOf(schema: Schema): unknown {
  if (schema.examples !== undefined) return schema.examples[0];
  if (schema.enum !== undefined) return schema.enum[0];
  if (schema.properties === undefined) throw new Error(`no example in ${JSON.stringify(schema).slice(0, 200)}`);
  return Object.fromEntries((schema.required ?? []).map((name) => [name, valueOf(schema.properties![name]!)]));
}

/** A valid request for `operation`: path ids of existing rows where the document names a user. */
function requestOf(operation: Operation): { path: string; body: unknown } {
  const path = operation.path.replace('{id}', operation.path.startsWith('/users/') ? ids.user : ids.other).replace('{passkey_id}', ids.other);
  if (operation.body === undefined) return { path, body: undefined };
  const body = valueOf(operation.body);
  const refusal = bodyRefusal(documentRules(document, operation.method, operation.path), body);
  if (refusal !== undefined) throw new Error(`${operation.operationId}: the body made from the document is not valid: ${refusal}`);
  return { path, body };
}

async function sendEvery(): Promise<{ operationId: string; status: number; text: string }[]> {
  const answers = [];
  // The lookup by address alone is answered outside the router (src/http/handler.ts): it keeps the router's promises.
  // First, before the operations below change or delete the user.
  const lookup = await server.request('GET', '/users?email=outage%40example.com');
  answers.push({ operationId: 'listUsers by address alone', status: lookup.status, text: await lookup.text() });
  for (const operation of operations) {
    const { path, body } = requestOf(operation);
    const response = await server.request(operation.method.toUpperCase(), path, body);
    answers.push({ operationId: operation.operationId, status: response.status, text: await response.text() });
  }
  return answers;
}

beforeAll(async () => {
  if (skip) return;
  const database = await pg.server().freshDatabase();
  server = await startServer({
    args: ['serve', '--port', '0', '--pwned-check', 'off', '--database-url', database.url, '--redis-url', redis.server().url, '--secret', 'outage-secret-0123456789',
      '--webauthn-rp-id', 'example.com', '--webauthn-origin', 'https://example.com'],
    timeoutMs: 60_000,
  });
  document = await (await fetch(`${server.url}/docs/json`)).json();
  operations = Object.entries<Record<string, any>>(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ operationId: op.operationId, method, path, body: op.requestBody?.content?.['application/json']?.schema })),
  );
  const created: any = await (await server.request('POST', '/users', { email: 'outage@example.com', password: STRONG_PASSWORD })).json();
  ids.user = created.id;
  ids.other = 'x7gq2m9kd4a8rfe3hn5pjc6w';
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await killAllServers();
});

describe.skipIf(skip)('every operation of /docs/json while an engine is down', () => {
  test('the document has operations and a valid request is made for each', () => {
    expect(operations.length).toBeGreaterThan(40);
    for (const operation of operations) expect(() => requestOf(operation)).not.toThrow();
  });

  test('PostgreSQL stopped: every operation that reads or writes stored data answers 503 UNAVAILABLE, none 500', async () => {
    await pg.server().stop('fast');
    try {
      const answers = await sendEvery();
      const unexpected = answers.filter((a) =>
        WITHOUT_DATABASE.has(a.operationId) ? a.status !== 200 : a.status !== 503 || JSON.parse(a.text).error !== 'UNAVAILABLE',
      );
      expect(unexpected).toEqual([]);
    } finally {
      await pg.server().start();
    }
  }, 120_000);

  test('Redis stopped: every operation answers as usual on per-process limits, none 5xx', async () => {
    await redis.server().kill();
    try {
      const answers = await sendEvery();
      expect(answers.filter((a) => a.status >= 500)).toEqual([]);
      // The fallback is the documented one: logged once, and the service kept working (the user is there).
      expect(server.lines.some((line) => String(line.message).startsWith('Redis is unreachable: limits are per process'))).toBe(true);
      expect(answers.find((a) => a.operationId === 'getUser')?.status).toBe(200);
      expect(JSON.parse(answers.find((a) => a.operationId === 'listUsers by address alone')!.text)).toMatchObject([{ id: ids.user }]);
    } finally {
      await redis.server().start();
    }
  }, 120_000);
});
