// POST /verify-api-key is answered by the outer handler without Elysia (src/http/direct-routes.ts,
// DirectPost). These tests hold it to the route it stands in for: the same outer handler without the
// direct POST sends every request through Elysia's route, and for every body, caller and size both
// must give the same status, headers, body, access line and metrics observation. Then, on a real
// server, the same through Bun.serve's routes as through its fetch handler.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { verifyApiKeyDirectly } from '../src/api-keys/routes';
import { createHandler } from '../src/app';
import { parseServeConfig } from '../src/cli/config';
import { serve } from '../src/cli/serve';
import { createRequestHandler } from '../src/http/handler';
import { defaultKey, digestOf, makeKey, type ServiceKey } from '../src/keys/model';
import { createKeyRing } from '../src/keys/service';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { tempDirsOfThisFile } from './support/server-process';

const scoped = (name: string, scope: string): [ServiceKey, string] => {
  const secret = `${name}-key-0123456789abcdef`;
  const made = makeKey(name, scope, digestOf(secret));
  if (typeof made === 'string') throw new Error(made);
  return [made, secret];
};
const [reader, readerSecret] = scoped('reader', 'read');
const [verifier, verifierSecret] = scoped('verifier', 'verifyApiKey');

describe('POST /verify-api-key answered directly, as its route answers', () => {
  const h = createHarness();
  const ring = createKeyRing([defaultKey(SECRET), reader, verifier]);
  const seen = { direct: [] as unknown[], routed: [] as unknown[], wired: [] as unknown[] };
  const outer = (into: unknown[], direct: boolean) =>
    createRequestHandler({
      findCaller: ring.find,
      // The access line without what differs by nature: the request's id and duration.
      log: ({ request_id: _id, ms: _ms, ...line }) => into.push({ log: line }),
      route: (request) => h.app.handle(request),
      docs: true,
      directPosts: direct ? [verifyApiKeyDirectly(h.services.apiKeys)] : [],
      observe: (method, route, status) => into.push({ observed: [method, route, status] }),
      observeCaller: (name) => into.push({ caller: name }),
    });
  // Built once the harness is ready: on PostgreSQL its instances come up asynchronously.
  const handlers = h.ready.then(() => ({
    direct: outer(seen.direct, true),
    routed: outer(seen.routed, false),
    wired: createHandler(h.app, h.services, { keys: ring, log: ({ request_id: _id, ms: _ms, ...line }) => seen.wired.push({ log: line }) }),
  }));

  type Body = string | Uint8Array | (() => ReadableStream<Uint8Array>);
  async function answer(handle: (request: Request) => Response | Promise<Response>, body: Body, auth: string, sized: boolean) {
    const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
    const headers: Record<string, string> = { authorization: auth, 'content-type': 'application/json' };
    if (sized && bytes instanceof Uint8Array) headers['content-length'] = String(bytes.byteLength);
    const response = await handle(new Request('http://localhost/verify-api-key?x=1', { method: 'POST', headers, body: typeof bytes === 'function' ? bytes() : bytes }));
    return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  }

  test('every body, caller and framing: the same answer, log line and observation as through the route', async () => {
    const { direct, routed, wired } = await handlers;
    const user = await h.createUser();
    const create = async (body: Record<string, unknown>) => (await h.call('POST', `/users/${user.id}/api-keys`, { body: { name: 'k', ...body } })).json.key as string;
    const key = await create({ scopes: ['repo:read'] });
    const soon = await create({ expires_at: Math.floor(h.now() / 1000) + 60 });
    const other = await h.createUser();
    const otherKey = (await h.call('POST', `/users/${other.id}/api-keys`, { body: { name: 'k' } })).json.key as string;
    expect((await h.call('POST', `/users/${other.id}/disable`, { body: {} })).status).toBe(200);
    h.advance(120_000);

    const deep = `{"key":${JSON.stringify(key)},"extra":${'['.repeat(40)}${']'.repeat(40)}}`;
    const json = (value: unknown) => JSON.stringify(value);
    const chunks = (text: string, size = 1000) => () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(text);
          for (let i = 0; i < bytes.length; i += size) controller.enqueue(bytes.slice(i, i + size));
          controller.close();
        },
      });
    const bodies: Body[] = [
      json({ key }), json({ key, scopes: ['repo:read'] }), json({ key, scopes: ['repo:write'] }), json({ key: soon }), json({ key: otherKey }),
      json({ key: key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A') }), json({ key: `${key}x` }), json({ key: 'gh_nothing' }), json({ key, extra: 1 }),
      json({ key, scopes: 'repo:read' }), json({ key, scopes: ['repo:read', 'repo:read'] }), json({ key, scopes: Array.from({ length: 33 }, (_, n) => `s${n}`) }),
      json({ key, scopes: ['Repo'] }), json({ key: 5 }), json({ key: null }), json({ scopes: [] }), '{"__proto__":{"key":"x"}}', `{"constructor":1,"key":${json(key)}}`,
      '', '   ', '{}', '[]', 'null', '"text"', '42', 'not json', deep, new Uint8Array([0x7b, 0x22, 0x6b, 0xff, 0x22, 0x7d]),
      chunks(json({ key })), chunks(json({ key: 'x'.repeat(70_000) })), chunks('{"key":', 3),
    ];
    const callers = [SECRET, readerSecret, verifierSecret];
    for (const body of bodies) {
      for (const auth of callers) {
        for (const sized of [true, false]) {
          const [fromDirect, fromRoute, fromWired] = [await answer(direct, body, auth, sized), await answer(routed, body, auth, sized), await answer(wired, body, auth, sized)];
          const label = { body: typeof body === 'function' ? 'chunked' : String(body).slice(0, 80), auth: ring.find(auth)?.name, sized };
          expect({ ...label, ...fromDirect }).toEqual({ ...label, ...fromRoute });
          expect({ ...label, ...fromWired }).toEqual({ ...label, ...fromRoute });
        }
      }
    }
    expect(seen.direct).toEqual(seen.routed);
    expect(seen.wired).toEqual(seen.routed.filter((entry) => 'log' in (entry as object)));
    // The cases above reach every answer: a check that never ran would pass too.
    const statuses = seen.routed.flatMap((entry) => ('observed' in (entry as object) ? [(entry as { observed: unknown[] }).observed[2]] : []));
    expect(new Set(statuses)).toEqual(new Set([200, 400, 403, 413]));
    const errors = new Set((await Promise.all(bodies.map((body) => answer(direct, body, SECRET, true)))).map((a) => (a.status === 200 ? 'ok' : JSON.parse(a.body).error)));
    expect(errors).toEqual(new Set(['ok', 'INVALID_DATA', 'INVALID_API_KEY', 'API_KEY_EXPIRED', 'INSUFFICIENT_SCOPE', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE']));
  });
});

describe('POST /verify-api-key through Bun.serve routes', () => {
  const tempDir = tempDirsOfThisFile();
  let served: Awaited<ReturnType<typeof serve>>;
  let base = '';
  beforeAll(async () => {
    const config = parseServeConfig(['--port', '0', '--dir', tempDir(), '--secret', SECRET, '--pwned-check', 'off'], {});
    served = await serve(config, () => {});
    base = `http://127.0.0.1:${served.server.port}`;
  });
  afterAll(() => served.stop());

  const summary = async (response: Response) => {
    const kept = [...response.headers].filter(([name]) => name !== 'date' && name !== 'content-length');
    return { status: response.status, headers: Object.fromEntries(kept), body: await response.text() };
  };

  test('every method, path and body answers as the fetch handler does', async () => {
    const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers: { authorization: SECRET }, body: JSON.stringify(body) });
    const user = (await (await post('/users', { password: STRONG_PASSWORD })).json()) as { id: string };
    const { key } = (await (await post(`/users/${user.id}/api-keys`, { name: 'k' })).json()) as { key: string };
    const cases: [string, string, string | undefined][] = [
      ['POST', '/verify-api-key', JSON.stringify({ key })], ['POST', '/verify-api-key?a=b', JSON.stringify({ key, scopes: ['x'] })],
      ['POST', '/verify-api-key', 'not json'], ['POST', '/verify-api-key/', JSON.stringify({ key })], ['GET', '/verify-api-key', undefined],
      ['PUT', '/verify-api-key', JSON.stringify({ key })], ['HEAD', '/verify-api-key', undefined], ['OPTIONS', '/verify-api-key', undefined],
    ];
    const ok: string[] = [];
    for (const [method, path, body] of cases) {
      const init = { method, headers: { authorization: SECRET }, body };
      const overHttp = await summary(await fetch(`${base}${path}`, init));
      const viaFetch = await summary(await served.server.fetch(new Request(`${base}${path}`, init)));
      expect({ method, path, ...overHttp }).toEqual({ method, path, ...(method === 'HEAD' ? { ...viaFetch, body: '' } : viaFetch) });
      if (overHttp.status === 200) ok.push(path);
    }
    // Elysia takes a trailing slash as the same route; Bun's router does not, so it goes the long way.
    expect(ok).toEqual(['/verify-api-key', '/verify-api-key/']);
  });
});
