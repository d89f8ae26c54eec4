import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { createRateLimits } from '../../src/security/rate-limit';
import { MAX_BODY_DEPTH } from '../../src/http/conventions';
import { createHarness, SECRET, STRONG_PASSWORD } from '../support/harness';
import { CLIENT_IPS, contentType, hostilePayload, nearValidPayload, type Payload } from './arbitraries';
import { checkAnswer, checkRefusalKeptState, servedRoutes, type FuzzRoute, type Sent } from './contract';
import { exhaustLimits, FastHasher, NOW_MS, seedResetter, takeSnapshot } from './seed';
import { buildPath, decodedSegment, junkSegment, pathSegmentFor, queryString } from './urls';
import { parseSamples } from '../support/prom-text';

/**
 * Property-based fuzzing of every endpoint (issue 7). Each case restores the seeded database, sends one
 * request and checks the answer against the contract and the database against a snapshot.
 * On failure fast-check reports the seed and path; replay with FUZZ_SEED=<seed> (and FUZZ_PATH=<path>
 * with `-t` naming the failing test).
 */
const seed = process.env.FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 0x100000000) : Number(process.env.FUZZ_SEED);
const path = process.env.FUZZ_PATH;
/** FUZZ_SCALE=10 runs ten times the cases, for a deeper search than CI's. */
const scale = Number(process.env.FUZZ_SCALE ?? 1);
const TIMEOUT_MS = 120_000 * scale;

const h = createHarness({ hasher: new FastHasher(), startMs: NOW_MS });
const sqlite = h.deps.db.$client;
const restoreSeed = seedResetter(sqlite);
const routes = await servedRoutes(h);

interface Case {
  route: FuzzRoute;
  segment: string;
  query: string | undefined;
  payload: Payload;
  contentType: string | undefined;
  /** Most cases start with fresh rate limits; some keep the previous case's counts (so they replay alone less exactly), some find every limit spent. */
  limits: 'fresh' | 'kept' | 'spent';
}

const payloadBytes = (payload: Payload): Uint8Array | undefined =>
  payload.kind === 'none' ? undefined : payload.kind === 'bytes' ? payload.bytes : new TextEncoder().encode(payload.text);

/** What each property saw, as `METHOD path status code`, to prove it reached past input validation. */
type Seen = Set<string>;

async function runCase(c: Case, seen: Seen): Promise<void> {
  restoreSeed();
  if (c.limits !== 'kept') h.deps.limits = createRateLimits(h.deps.clock);
  if (c.limits === 'spent') await exhaustLimits(h.deps.limits, CLIENT_IPS);
  const body = c.route.method === 'GET' ? undefined : payloadBytes(c.payload);
  const headers: Record<string, string> = { authorization: SECRET };
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  const before = takeSnapshot(sqlite);
  const response = await h.handle(new Request(`http://localhost${buildPath(c.route.path, c.segment, c.query)}`, { method: c.route.method, headers, body }));
  const answer = { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  const sent: Sent = {
    route: c.route,
    pathId: c.route.path.includes(':id') ? decodedSegment(c.segment) : undefined,
    bodyText: body === undefined ? undefined : new TextDecoder().decode(body),
    bodyBytes: body?.byteLength ?? 0,
  };
  const code = checkAnswer(sent, answer);
  if (code !== undefined) checkRefusalKeptState(sent, code, before, takeSnapshot(sqlite));
  if (code === 'TOO_MANY_REQUESTS') expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  seen.add(`${c.route.method} ${c.route.path} ${answer.status}${code === undefined ? '' : ` ${code}`}`);
}

const caseOf = (route: FuzzRoute, parts: { payload: fc.Arbitrary<Payload>; segment?: fc.Arbitrary<string>; query?: fc.Arbitrary<string | undefined> }) =>
  fc.record({
    route: fc.constant(route),
    segment: parts.segment ?? pathSegmentFor(route.path),
    query: parts.query ?? fc.option(queryString, { freq: 4, nil: undefined }),
    payload: parts.payload,
    contentType,
    limits: fc.constantFrom<Case['limits']>(...Array<'fresh'>(8).fill('fresh'), 'kept', 'spent'),
  });

async function fuzz(arbitrary: fc.Arbitrary<Case>, numRuns: number): Promise<Seen> {
  const seen: Seen = new Set();
  await fc.assert(
    fc.asyncProperty(arbitrary, (c) => runCase(c, seen)),
    { numRuns: Math.round(numRuns * scale), seed, path, endOnFailure: true },
  );
  return seen;
}

const anyRoute = <T>(build: (route: FuzzRoute) => fc.Arbitrary<T>) => fc.constantFrom(...routes).chain(build);
const seenCodes = (seen: Seen) => new Set([...seen].map((s) => s.split(' ')[3]).filter(Boolean));
const successes = (seen: Seen) => new Set([...seen].filter((s) => /^\S+ \S+ 20\d$/.test(s)).map((s) => s.split(' ').slice(0, 2).join(' ')));
const routeNames = routes.map((r) => `${r.method} ${r.path}`);

describe(`fuzzing every endpoint (fast-check seed ${seed})`, () => {
  test('reads the route list from the app, with the error codes the checks below rely on', () => {
    expect(routes.length).toBeGreaterThan(25);
    const name = (r: FuzzRoute) => `${r.method} ${r.path}`;
    expect(routes.filter((r) => r.takesBody && !r.errors.has('INVALID_DATA')).map(name)).toEqual([]);
    expect(routes.filter((r) => r.path.includes(':id') && !r.errors.has('NOT_FOUND')).map(name)).toEqual([]);
  });

  test('near-valid bodies built from each endpoint\'s own fields reach every check and every success', async () => {
    const nearValid = anyRoute((route) =>
      caseOf(route, {
        payload: nearValidPayload(route),
        query: fc.option(queryString, { freq: 9, nil: undefined }),
      }),
    );
    const seen = await fuzz(nearValid, 5000);
    expect([...successes(seen)].sort()).toEqual([...routeNames].sort());
    for (const code of ['INVALID_DATA', 'NOT_FOUND', 'TOO_MANY_REQUESTS', 'WEAK_PASSWORD', 'INCORRECT_PASSWORD', 'INCORRECT_CODE', 'INVALID_REQUEST', 'EMAIL_ALREADY_USED', 'NOT_ALLOWED']) {
      expect({ code, seen: seenCodes(seen).has(code) }).toEqual({ code, seen: true });
    }
  }, TIMEOUT_MS);

  test('hostile bodies: wrong types, odd Unicode, deep nesting, duplicate keys, invalid UTF-8, any content type', async () => {
    const seen = await fuzz(anyRoute((route) => caseOf(route, { payload: hostilePayload(route) })), 3500);
    expect(seenCodes(seen)).toContain('INVALID_DATA');
    expect(seenCodes(seen)).toContain('PAYLOAD_TOO_LARGE');
  }, TIMEOUT_MS);

  test('hostile path ids and query strings', async () => {
    const urls = anyRoute((route) =>
      caseOf(route, {
        payload: nearValidPayload(route),
        segment: junkSegment,
        query: queryString,
      }),
    );
    const seen = await fuzz(urls, 2000);
    expect(seenCodes(seen)).toContain('NOT_FOUND');
    expect(successes(seen).has('GET /users')).toBe(true);
    expect(successes(seen).has('POST /users')).toBe(true);
  }, TIMEOUT_MS);

  test('after the cases above, the request metrics still hold only route templates, known methods and statuses', async () => {
    const samples = parseSamples((await h.call('GET', '/metrics')).text).filter((sample) => sample.name === 'gatehouse_http_requests_total');
    const templates = new Set([...h.app.routes.map((route) => route.path), 'unmatched']);
    const odd = samples.filter((sample) => !templates.has(sample.labels.route!) || !/^[1-5][0-9]{2}$/.test(sample.labels.status!));
    expect(odd).toEqual([]);
    // A handful of statuses per route, whatever ids, queries and bodies were thrown at it.
    expect(samples.length).toBeLessThan(routes.length * 8);
  });
});

describe('deeply nested bodies (found by the fuzzer: a 500 from a stack overflow, and most of a second per request)', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;

  // The parser refuses them before Elysia's validation formats the value (the slow, overflowing part);
  // the next test shows that: an unknown field one level too deep is refused, which validation would not do.
  test('beyond the depth limit are INVALID_DATA, also 10,000 levels deep inside a field', async () => {
    for (const body of [nested(10_000), `{"password":${nested(10_000)}}`, `{"password":${'{"a":'.repeat(10_000)}0${'}'.repeat(10_000)}}`]) {
      const res = await h.call('POST', '/users', { rawBody: body });
      expect(res.json).toEqual({ error: 'INVALID_DATA' });
    }
  });

  test('an unknown field nested up to the limit is still ignored', async () => {
    const withMeta = (meta: string) => `{"password":"${STRONG_PASSWORD}","meta":${meta}}`;
    expect((await h.call('POST', '/users', { rawBody: withMeta(nested(MAX_BODY_DEPTH - 1)) })).status).toBe(200);
    expect((await h.call('POST', '/users', { rawBody: withMeta(nested(MAX_BODY_DEPTH)) })).json).toEqual({ error: 'INVALID_DATA' });
  });
});
