import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { createRateLimits } from '../../src/limits/rate-limit';
import { MAX_BODY_DEPTH } from '../../src/http/conventions';
import { createHarness, SECRET, STRONG_PASSWORD } from '../support/harness';
import { CLIENT_IPS, contentType, hostilePayload, nearValidPayload, type Payload } from './arbitraries';
import { checkAnswer, checkRefusalKeptState, decodeBody, servedRoutes, type FuzzRoute, type Sent } from './contract';
import { exhaustLimits, FastHasher, NOW_MS, seedResetter, takeSnapshot } from './seed';
import { FUZZ_RP } from './passkeys-seed';
import { FIXED_SEED, FUZZ_PLAN } from './plan';
import { buildPath, decodedSegment, junkSegment, passkeySegment, pathSegmentFor, queryString } from './urls';
import { parseSamples } from '../support/prom-text';

/**
 * Property-based fuzzing of every endpoint (issues 7 and 11). Each case starts from the seeded
 * database, sends one request and checks the answer against the contract and the database against
 * the seed. The published document is the judge of validity (API.md §16): Ajv reads /docs/json, and a
 * case fails when the server answers INVALID_DATA to a request the document accepts, or anything but
 * INVALID_DATA to a body it refuses. Every run uses a fixed seed and a fresh one (both printed); on failure fast-check reports
 * the seed and path: replay with FUZZ_SEED=<seed> FUZZ_PATH=<path> and `-t` naming the failing test.
 * `bun run fuzz -- --cases N` runs N requests in all.
 */
// On SQLite whatever the set-up: the cases are judged by SQLite's own change counter and snapshot,
// and a 20,000-request run per PostgreSQL set-up would not fit CI's time.
const h = createHarness({ hasher: new FastHasher(), startMs: NOW_MS, relyingParty: FUZZ_RP, setup: 'sqlite' });
const sqlite = h.deps.db.$client;
const restoreSeed = seedResetter(sqlite);
const routes = await servedRoutes(h);

restoreSeed();
const SEED_SNAPSHOT = takeSnapshot(sqlite);
/** Rows changed since the connection opened (triggers included): when it has not moved, nothing changed. */
const changesQuery = sqlite.query<{ n: number }, []>('select total_changes() as n');
const totalChanges = () => changesQuery.get()!.n;
let changesAtSeed = totalChanges();

interface Case {
  route: FuzzRoute;
  segment: string;
  /** Used only by the routes of one passkey. */
  passkeySegment: string;
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
let requestsSent = 0;

async function runCase(c: Case, seen: Seen): Promise<void> {
  // Only a case that changed something pays for putting the seed back.
  if (totalChanges() !== changesAtSeed) {
    restoreSeed();
    changesAtSeed = totalChanges();
  }
  if (c.limits !== 'kept') h.deps.limits = createRateLimits(h.deps.clock);
  if (c.limits === 'spent') exhaustLimits(h.deps.limits, CLIENT_IPS);
  const body = c.route.method === 'GET' ? undefined : payloadBytes(c.payload);
  const headers: Record<string, string> = { authorization: SECRET };
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  requestsSent++;
  const response = await h.handle(new Request(`http://localhost${buildPath(c.route.path, c.segment, c.query, c.passkeySegment)}`, { method: c.route.method, headers, body }));
  const answer = { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  const sent: Sent = {
    route: c.route,
    pathId: c.route.path.includes(':id') ? decodedSegment(c.segment) : undefined,
    passkeyId: decodedSegment(c.passkeySegment),
    query: c.query,
    ...decodeBody(body),
  };
  const code = checkAnswer(sent, answer);
  if (code !== undefined && totalChanges() !== changesAtSeed) checkRefusalKeptState(sent, code, SEED_SNAPSHOT, takeSnapshot(sqlite));
  if (code === 'TOO_MANY_REQUESTS') expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  if (response.headers.get('x-content-type-options') !== 'nosniff' || response.headers.get('cache-control') !== 'no-store') {
    throw new Error(`missing nosniff or no-store on ${c.route.method} ${c.route.path} -> ${answer.status}`);
  }
  seen.add(`${c.route.method} ${c.route.path} ${answer.status}${code === undefined ? '' : ` ${code}`}`);
}

const caseOf = (route: FuzzRoute, parts: { payload: fc.Arbitrary<Payload>; segment?: fc.Arbitrary<string>; query?: fc.Arbitrary<string | undefined> }) =>
  fc.record({
    route: fc.constant(route),
    segment: parts.segment ?? pathSegmentFor(route.path),
    passkeySegment,
    query: parts.query ?? fc.option(queryString, { freq: 4, nil: undefined }),
    payload: parts.payload,
    contentType,
    limits: fc.constantFrom<Case['limits']>(...Array<'fresh'>(8).fill('fresh'), 'kept', 'spent'),
  });

async function fuzz(arbitrary: fc.Arbitrary<Case>, seed: number, numRuns: number): Promise<Seen> {
  const seen: Seen = new Set();
  await fc.assert(
    fc.asyncProperty(arbitrary, (c) => runCase(c, seen)),
    { numRuns, seed, path: FUZZ_PLAN.path, endOnFailure: true },
  );
  return seen;
}

const anyRoute = <T>(build: (route: FuzzRoute) => fc.Arbitrary<T>) => fc.constantFrom(...routes).chain(build);
const seenCodes = (seen: Seen) => new Set([...seen].map((s) => s.split(' ')[3]).filter(Boolean));
const successes = (seen: Seen) => new Set([...seen].filter((s) => /^\S+ \S+ 20\d$/.test(s)).map((s) => s.split(' ').slice(0, 2).join(' ')));
const routeNames = routes.map((r) => `${r.method} ${r.path}`);
const TIMEOUT_MS = Math.max(120_000, FUZZ_PLAN.casesPerSeed * 20);

console.log(`fuzz: ${FUZZ_PLAN.description}; ${FUZZ_PLAN.casesPerSeed * FUZZ_PLAN.seeds.length} requests planned`);

test('reads the route list from the app, with the error codes and rules the checks below rely on', () => {
  expect(routes.length).toBeGreaterThan(25);
  const name = (r: FuzzRoute) => `${r.method} ${r.path}`;
  expect(routes.filter((r) => r.takesBody && !r.errors.has('INVALID_DATA')).map(name)).toEqual([]);
  expect(routes.filter((r) => r.path.includes(':id') && !r.errors.has('NOT_FOUND')).map(name)).toEqual([]);
  expect(routes.filter((r) => Object.values(r.rules).some((rule) => rule.type === undefined)).map(name)).toEqual([]);
});

for (const seed of FUZZ_PLAN.seeds) {
  const runs = (share: number) => Math.max(1, Math.round(FUZZ_PLAN.casesPerSeed * share));

  describe(`fuzzing every endpoint (fast-check seed ${seed})`, () => {
    // What each fuzz test reached, for the coverage test after it. Coverage is asserted for the fixed
    // seed at CI's case count only (fewer cases, or one replayed path: reported as skipped, never as
    // passed); a fresh seed searches for wrong answers and has no coverage tests.
    const reached: Record<'nearValid' | 'hostile' | 'urls', Seen | undefined> = { nearValid: undefined, hostile: undefined, urls: undefined };
    const coverage = seed === FIXED_SEED ? test.skipIf(!FUZZ_PLAN.checkCoverage(seed)) : () => undefined;
    const seenBy = (name: keyof typeof reached): Seen => {
      const seen = reached[name];
      if (seen === undefined) throw new Error(`the fuzz test before this one did not finish (${name})`);
      return seen;
    };

    test("near-valid bodies built from each endpoint's own fields", async () => {
      const nearValid = anyRoute((route) =>
        caseOf(route, {
          payload: nearValidPayload(route),
          query: fc.option(queryString, { freq: 9, nil: undefined }),
        }),
      );
      reached.nearValid = await fuzz(nearValid, seed, runs(0.5));
    }, TIMEOUT_MS);

    coverage('near-valid bodies reached every check and every success', () => {
      const seen = seenBy('nearValid');
      expect([...successes(seen)].sort()).toEqual([...routeNames].sort());
      const codes = ['INVALID_DATA', 'NOT_FOUND', 'TOO_MANY_REQUESTS', 'WEAK_PASSWORD', 'INCORRECT_PASSWORD', 'INCORRECT_CODE', 'INVALID_REQUEST', 'EMAIL_ALREADY_USED', 'NOT_ALLOWED', 'USER_DISABLED'];
      for (const code of [...codes, 'PASSKEY_VERIFICATION_FAILED', 'PASSKEY_ALREADY_REGISTERED']) {
        expect({ code, seen: seenCodes(seen).has(code) }).toEqual({ code, seen: true });
      }
    });

    test('hostile bodies: wrong types, prototype-named keys, control characters, odd Unicode, huge strings, deep nesting, duplicate keys, invalid UTF-8, any content type', async () => {
      reached.hostile = await fuzz(anyRoute((route) => caseOf(route, { payload: hostilePayload(route) })), seed, runs(0.3));
    }, TIMEOUT_MS);

    coverage('hostile bodies reached INVALID_DATA and PAYLOAD_TOO_LARGE', () => {
      const seen = seenBy('hostile');
      expect(seenCodes(seen)).toContain('INVALID_DATA');
      expect(seenCodes(seen)).toContain('PAYLOAD_TOO_LARGE');
    });

    test('hostile path ids and query strings', async () => {
      const urls = anyRoute((route) =>
        caseOf(route, {
          payload: nearValidPayload(route),
          segment: junkSegment,
          query: queryString,
        }),
      );
      reached.urls = await fuzz(urls, seed, runs(0.2));
    }, TIMEOUT_MS);

    coverage('hostile path ids and query strings reached NOT_FOUND and the list and create successes', () => {
      const seen = seenBy('urls');
      expect(seenCodes(seen)).toContain('NOT_FOUND');
      expect(successes(seen).has('GET /users')).toBe(true);
      expect(successes(seen).has('POST /users')).toBe(true);
    });
  });
}

test('sent the planned number of requests', () => {
  if (FUZZ_PLAN.path === undefined) expect(requestsSent).toBeGreaterThanOrEqual(FUZZ_PLAN.casesPerSeed * FUZZ_PLAN.seeds.length - FUZZ_PLAN.seeds.length * 3);
  console.log(`fuzz: ${requestsSent} requests sent (seeds ${FUZZ_PLAN.seeds.join(', ')})`);
});

test('after the cases above, the request metrics still hold only route templates, known methods and statuses', async () => {
  const samples = parseSamples((await h.call('GET', '/metrics')).text).filter((sample) => sample.name === 'gatehouse_http_requests_total');
  const templates = new Set([...h.app.routes.map((route) => route.path), 'unmatched']);
  const odd = samples.filter((sample) => !templates.has(sample.labels.route!) || !/^[1-5][0-9]{2}$/.test(sample.labels.status!));
  expect(odd).toEqual([]);
  // A handful of statuses per route, whatever ids, queries and bodies were thrown at it.
  expect(samples.length).toBeLessThan(routes.length * 8);
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
