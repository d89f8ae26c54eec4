import { afterAll, describe, expect, test } from 'bun:test';
import { createBreachChecker } from '../src/breach-check/checker';
import { startFakePwnedServer, type FakePwnedOptions, type FakePwnedServer } from './support/fake-pwned-server';
import { createHarness } from './support/harness';
import { killAllServers, startServer } from './support/server-process';

/** In the bundled common-password list, and unknown to the fake API. */
const COMMON = 'qwertyui';
const strongPassword = () => `outage test ${crypto.randomUUID()}`;
/** Room for two argon2 hashes (password and recovery code) on a busy machine, on top of the timeout. */
const MARGIN_MS = 2_500;

const fakes: FakePwnedServer[] = [];
const stopServers: (() => void)[] = [];
afterAll(async () => {
  for (const fake of fakes) fake.stop();
  for (const stop of stopServers) stop();
  await killAllServers();
});

function fakeApi(options: FakePwnedOptions = {}): FakePwnedServer {
  const fake = startFakePwnedServer(options);
  fakes.push(fake);
  return fake;
}

async function closedPortUrl(): Promise<string> {
  const fake = startFakePwnedServer();
  fake.stop();
  return fake.url;
}

/** Answers 200 at once, sends one valid line, then never finishes the body. */
function stalledBodyApiUrl(): string {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(`${'A'.repeat(35)}:0\r\n`));
          },
        }),
      ),
  });
  stopServers.push(() => void server.stop(true));
  return `http://127.0.0.1:${server.port}`;
}

type Post = (password: string) => Promise<{ status: number; body: unknown }>;

/** A common password is refused and a strong one accepted, each answered within the deadline. */
async function expectBundledListFallback(post: Post, deadlineMs: number) {
  const timed = async (password: string) => {
    const started = performance.now();
    const answer = await post(password);
    return { ...answer, ms: performance.now() - started };
  };
  const [weak, strong] = await Promise.all([timed(COMMON), timed(strongPassword())]);
  expect([weak.status, weak.body]).toEqual([400, { error: 'WEAK_PASSWORD' }]);
  expect(strong.status).toBe(200);
  expect((strong.body as { id: string }).id).toMatch(/^[a-z2-9]{24}$/);
  expect(weak.ms).toBeLessThan(deadlineMs);
  expect(strong.ms).toBeLessThan(deadlineMs);
}

const TIMEOUT_MS = 300;

const outages: [string, () => Promise<string> | string][] = [
  ['unreachable (closed port)', closedPortUrl],
  ['slower than the timeout', () => fakeApi({ delayMs: 3_000 }).url],
  ['a body that stalls after the headers', stalledBodyApiUrl],
  ['HTTP 500', () => fakeApi({ status: 500, body: 'internal error' }).url],
  ['HTTP 429', () => fakeApi({ status: 429, body: '{"statusCode":429}' }).url],
  ['HTTP 404', () => fakeApi({ status: 404 }).url],
  ['an HTML body', () => fakeApi({ body: '<html><body>Just a moment...</body></html>' }).url],
  ['a JSON body', () => fakeApi({ body: '{"hashes":[]}' }).url],
  ['a truncated line', () => fakeApi({ body: `${'A'.repeat(35)}:0\r\n${'B'.repeat(20)}` }).url],
  ['an empty 200 body', () => fakeApi({ body: '' }).url],
];

describe('breach API outage over HTTP (in process, checker timeout 300 ms)', () => {
  test.each(outages)('%s: POST /users falls back to the bundled list, never 5xx, within the timeout', async (_, apiUrl) => {
    const breachLogs: string[] = [];
    const breach = createBreachChecker({ mode: 'online', apiBaseUrl: await apiUrl(), timeoutMs: TIMEOUT_MS, log: (m) => breachLogs.push(m) });
    const h = createHarness({ breach });
    await h.ready; // a fresh PostgreSQL database is not part of the answer's time
    const post: Post = async (password) => {
      const res = await h.call('POST', '/users', { body: { password } });
      return { status: res.status, body: res.json };
    };
    await expectBundledListFallback(post, TIMEOUT_MS + MARGIN_MS);
    expect(breachLogs.length).toBe(2);
    for (const line of breachLogs) expect(line).toContain('using bundled common-password list');
    // The outage is not an error of the request: nothing was logged at error level.
    expect(h.logs.filter((line) => line.level === 'error')).toEqual([]);
  });
});

describe('breach API outage against the real process (2 s timeout)', () => {
  test('every kind of outage falls back to the bundled list without a 5xx, within the timeout', async () => {
    const onlyOnline = 'known only to the fake api 7';
    const fake = fakeApi({ breached: [onlyOnline] });
    const server = await startServer({ extraArgs: ['--pwned-check', 'online', '--pwned-api-url', fake.url, '--secret', 'outage-secret-123'] });
    const post: Post = async (password) => {
      const res = await server.request('POST', '/users', { password });
      return { status: res.status, body: await res.json() };
    };

    // While the API answers, its verdict is the one used.
    expect(await post(onlyOnline)).toEqual({ status: 400, body: { error: 'WEAK_PASSWORD' } });

    const deadline = 2_000 + MARGIN_MS;
    const scenarios: FakePwnedOptions[] = [
      // Longer than the deadline, so an answer within it shows the 2 s timeout cut the wait.
      { delayMs: 6_000 },
      { status: 500 },
      { status: 429 },
      { status: 404 },
      { body: 'not a range answer' },
      { body: '' },
    ];
    for (const scenario of scenarios) {
      fake.options.delayMs = scenario.delayMs;
      fake.options.status = scenario.status;
      fake.options.body = scenario.body;
      await expectBundledListFallback(post, deadline);
    }
    fake.stop(); // now unreachable
    await expectBundledListFallback(post, deadline);

    const fallbacks = server.lines.filter((line) => line.level === 'warn' && String(line.message).includes('common-password list'));
    expect(fallbacks.length).toBe(2 * (scenarios.length + 1));
    expect(server.lines.some((line) => line.level === 'error')).toBe(false);
    expect(await server.stop()).toBe(0);
  }, 30_000);
});
