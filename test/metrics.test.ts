import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { createApp, createHandler } from '../src/app';
import { createMetricsService } from '../src/metrics/service';
import { PasswordHasher } from '../src/hashing/password-hash';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { execute } from './support/rows';
import { parseSamples, sumOf } from './support/prom-text';
import { junkSegment } from './fuzz/urls';

const REQUESTS = 'gatehouse_http_requests_total';

/**
 * Every instance's samples (two on the postgres-2 set-up): counters are per process, so a count is
 * the sum over all of them; gauges read the shared database, so each instance shows the same value.
 * A scrape is counted by its instance once answered, so it is not in its own samples.
 */
async function scrapeEach(h: ReturnType<typeof createHarness>) {
  return (await h.callEach('GET', '/metrics')).map(parseSamples);
}
async function scrape(h: ReturnType<typeof createHarness>) {
  return (await scrapeEach(h)).flat();
}

describe('GET /metrics', () => {
  test('answers the Prometheus text format, with the credential only', async () => {
    const h = createHarness();
    const res = await h.call('GET', '/metrics');
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toContain('# TYPE gatehouse_http_requests_total counter');
    expect((await h.call('GET', '/metrics', { auth: null })).json).toEqual({ error: 'NOT_AUTHENTICATED' });
  });

  test('counts requests by method, route template and status; unrouted ones as "unmatched"', async () => {
    const h = createHarness();
    const user = await h.createUser();
    for (let i = 0; i < 3; i++) await h.call('GET', `/users/${user.id}`);
    await h.call('GET', '/users/not-a-user');
    await h.call('DELETE', '/users/not-a-user');
    await h.call('GET', '/no/such/path');
    await h.call('GET', `/users/${user.id}`, { auth: 'wrong' });
    await h.call('POST', '/users', { rawBody: '{' });
    const samples = await scrape(h);
    const count = (method: string, route: string, status: string) => sumOf(samples, REQUESTS, { method, route, status });
    expect(count('GET', '/users/:id', '200')).toBe(3);
    expect(count('GET', '/users/:id', '404')).toBe(1);
    expect(count('DELETE', '/users/:id', '404')).toBe(1);
    expect(count('POST', '/users', '200')).toBe(1);
    expect(count('POST', '/users', '400')).toBe(1);
    expect(count('GET', 'unmatched', '404')).toBe(1);
    expect(count('GET', 'unmatched', '401')).toBe(1);
    // Everything sent so far, the scrape itself not yet counted.
    expect(sumOf(samples, REQUESTS)).toBe(9);
    expect(sumOf(samples, 'gatehouse_http_request_duration_seconds_count', { method: 'GET', route: '/users/:id' })).toBe(4);
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes(user.id)))).toBe(false);
  });

  test('rate-limit refusals by limit, users total and the webhook outbox', async () => {
    const h = createHarness();
    const user = await h.createUser();
    await h.createUser({ email: 'ada@example.com' });
    for (let i = 0; i < 7; i++) await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD, client_ip: '192.0.2.1' } });
    for (let i = 0; i < 5; i++) await h.call('POST', `/users/${user.id}/email-verification-request`);
    await execute(h, "insert into webhook_deliveries (event_id, state) select id, case when id = 1 then 'failed' else 'pending' end from events");
    const each = await scrapeEach(h);
    const samples = each.flat();
    expect(sumOf(samples, 'gatehouse_rate_limit_refusals_total', { limit: 'address' })).toBe(2);
    expect(sumOf(samples, 'gatehouse_rate_limit_refusals_total', { limit: 'email_verification_requests' })).toBe(2);
    expect(sumOf(samples, 'gatehouse_rate_limit_refusals_total', { limit: 'login_block' })).toBe(0);
    for (const one of each) {
      expect(sumOf(one, 'gatehouse_users')).toBe(2);
      expect(sumOf(one, 'gatehouse_webhook_deliveries', { state: 'failed' })).toBe(1);
      expect(sumOf(one, 'gatehouse_webhook_deliveries', { state: 'pending' })).toBe(1);
    }
  });

  test('hashes in flight and queued, and SERVER_BUSY refusals, read from the hasher', async () => {
    const hasher = new PasswordHasher({ concurrency: 1, maxQueue: 2 });
    const h = createHarness({ hasher });
    await h.ready; // before the hashes start, so the scrape finds them still running
    const hashes = Array.from({ length: 3 }, () => hasher.hash(STRONG_PASSWORD));
    const busy = await hasher.hash(STRONG_PASSWORD).catch((error: Error) => error.message);
    expect(busy).toBe('SERVER_BUSY');
    // Read from the one hasher the harness's instances share: each shows the same.
    let [samples] = await scrapeEach(h);
    expect(sumOf(samples!, 'gatehouse_password_hashes_in_flight')).toBe(1);
    expect(sumOf(samples!, 'gatehouse_password_hashes_queued')).toBe(2);
    expect(sumOf(samples!, 'gatehouse_server_busy_total')).toBe(1);
    await Promise.all(hashes);
    [samples] = await scrapeEach(h);
    expect(sumOf(samples!, 'gatehouse_password_hashes_in_flight')).toBe(0);
    expect(sumOf(samples!, 'gatehouse_password_hashes_queued')).toBe(0);
    expect(sumOf(samples!, 'gatehouse_server_busy_total')).toBe(1);
  });

  test('--no-metrics: NOT_FOUND, and nothing recorded', async () => {
    const h = createHarness({ metrics: false });
    expect((await h.call('GET', '/metrics')).json).toEqual({ error: 'NOT_FOUND' });
    expect(h.services.metrics).toBeNull();
    expect(h.app.routes.some((route) => route.path === '/metrics')).toBe(false);
  });
});

describe('request duration histogram', () => {
  test('cumulative buckets, sum and count per method and route, over every status', async () => {
    const metrics = createMetricsService({
      store: { usersTotal: async () => 0, webhookDeliveries: async () => ({ pending: 0, failed: 0 }), usersAwaitingMigration: async () => 0 },
      hashing: { inFlight: 0, queued: 0, refusals: 0 },
    });
    for (const [status, seconds] of [[200, 0.0001], [200, 0.002], [404, 0.3], [500, 10]] as const) metrics.observeRequest('GET', '/users/:id', status, seconds);
    metrics.observeRequest('BREW', undefined, 401, 0.0005);
    const samples = parseSamples(await metrics.render());
    const bucket = (le: string) => sumOf(samples, 'gatehouse_http_request_duration_seconds_bucket', { route: '/users/:id', le });
    expect([bucket('0.0005'), bucket('0.001'), bucket('0.0025'), bucket('0.25'), bucket('0.5'), bucket('5'), bucket('+Inf')]).toEqual([1, 1, 2, 2, 3, 3, 4]);
    expect(sumOf(samples, 'gatehouse_http_request_duration_seconds_count', { route: '/users/:id' })).toBe(4);
    expect(sumOf(samples, 'gatehouse_http_request_duration_seconds_sum', { route: '/users/:id' })).toBeCloseTo(10.3021, 6);
    // A bound is inclusive (le), and an unknown method is OTHER on an unmatched route.
    expect(sumOf(samples, 'gatehouse_http_request_duration_seconds_bucket', { method: 'OTHER', route: 'unmatched', le: '0.0005' })).toBe(1);
    expect(sumOf(samples, REQUESTS, { method: 'OTHER', route: 'unmatched', status: '401' })).toBe(1);
  });
});

describe('label sets stay bounded under hostile traffic', () => {
  test('thousands of random paths and methods add no series beyond templates × methods × statuses', async () => {
    const h = createHarness();
    await h.ready;
    const templates = new Set([...h.app.routes.map((route) => route.path), 'unmatched']);
    const methods = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'PROPFIND', 'BREW', 'M-SEARCH', 'get'];
    const requests = fc.sample(
      fc.record({
        method: fc.constantFrom(...methods),
        prefix: fc.constantFrom('/users/', '/password-reset-requests/', '/email-update-requests/', '/', '/docs/', '/users/x/'),
        segment: junkSegment,
        suffix: fc.constantFrom('', '/verify-email', '/totp-credential', '/' + 'z'.repeat(40)),
        auth: fc.boolean(),
      }),
      { numRuns: 3000, seed: 15 },
    );
    const seriesCounts: number[] = [];
    for (const [i, r] of requests.entries()) {
      const response = await h.handle(
        new Request(`http://localhost${r.prefix}${r.segment}${r.suffix}`, { method: r.method, headers: r.auth ? { authorization: SECRET } : {} }),
      );
      await response.arrayBuffer();
      if (i % 1000 === 999) seriesCounts.push(Math.max(...(await scrapeEach(h)).map((one) => one.filter((s) => s.name === REQUESTS).length)));
    }
    const each = await scrapeEach(h);
    const samples = each.flat();
    const series = samples.filter((s) => s.name === REQUESTS);
    for (const s of series) {
      expect(templates.has(s.labels.route!)).toBe(true);
      expect(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER']).toContain(s.labels.method!);
      expect(s.labels.status).toMatch(/^[1-5][0-9][0-9]$/);
    }
    // Every request counted (and the three scrapes before, by each instance), in a few dozen series a
    // process that stopped growing long before the end.
    expect(sumOf(samples, REQUESTS)).toBe(3000 + 3 * each.length);
    for (const one of each) {
      expect(one.filter((s) => s.name === REQUESTS).length).toBeLessThan(80);
      expect(one.length).toBeLessThan(1200);
    }
    expect(seriesCounts[2]! - seriesCounts[1]!).toBeLessThanOrEqual(2);
  });
});

describe('handler without metrics', () => {
  test('createHandler works with no metrics service at all', async () => {
    const h = createHarness({ metrics: false });
    await h.ready;
    const handle = createHandler(createApp(h.services), h.services, { secret: SECRET, log: h.platform.log });
    expect((await handle(new Request('http://localhost/', { headers: { authorization: SECRET } }))).status).toBe(200);
  });
});
