import { afterEach, describe, expect, test } from 'bun:test';
import {
  createBreachChecker,
  DEFAULT_PWNED_API_URL,
  isCommonPassword,
  type BreachCheckOptions,
} from '../src/breach-check/checker';
import { pwnedHashParts, startFakePwnedServer, type FakePwnedServer } from './support/fake-pwned-server';

const BREACHED = 'correct horse battery staple';
const strongPassword = () => `Zq!${crypto.randomUUID()}-${crypto.randomUUID()}`;

const servers: FakePwnedServer[] = [];
const startServer = (...args: Parameters<typeof startFakePwnedServer>) => {
  const server = startFakePwnedServer(...args);
  servers.push(server);
  return server;
};
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});

function onlineChecker(apiBaseUrl: string, extra: Partial<BreachCheckOptions> = {}) {
  const logs: string[] = [];
  const checker = createBreachChecker({
    mode: 'online',
    apiBaseUrl,
    timeoutMs: 1000,
    log: (message) => logs.push(message),
    ...extra,
  });
  return { checker, logs };
}

function expectLogsFreeOf(logs: string[], password: string) {
  const { hash, prefix, suffix } = pwnedHashParts(password);
  for (const line of logs) {
    for (const secret of [password, hash, prefix, suffix, hash.toLowerCase(), suffix.toLowerCase()]) {
      expect(line).not.toContain(secret);
    }
  }
}

async function closedPortUrl(): Promise<string> {
  const server = startFakePwnedServer();
  const { url } = server;
  server.stop();
  return url;
}

describe('isCommonPassword', () => {
  test('matches bundled list entries exactly', () => {
    for (const password of ['password', '12345678', 'password123', 'qwertyui']) {
      expect(isCommonPassword(password)).toBe(true);
    }
    expect(isCommonPassword('Qwertyui')).toBe(false);
    expect(isCommonPassword('password1234567')).toBe(false);
    expect(isCommonPassword(' password')).toBe(false);
    expect(isCommonPassword('')).toBe(false);
    expect(isCommonPassword(strongPassword())).toBe(false);
  });
});

describe('online mode against the range API', () => {
  test('default API URL is the real service', () => {
    expect(DEFAULT_PWNED_API_URL).toBe('https://api.pwnedpasswords.com');
  });

  test('reports a breached password and a clean one', async () => {
    const server = startServer({ breached: [BREACHED, 'hunter2'] });
    const { checker, logs } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(true);
    expect(await checker.isBreached('hunter2')).toBe(true);
    expect(await checker.isBreached(strongPassword())).toBe(false);
    expect(logs).toEqual([]);
  });

  test('does not consult the bundled list when the API answers', async () => {
    const server = startServer({ breached: [] });
    const { checker } = onlineChecker(server.url);
    expect(await checker.isBreached('password')).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  test('sends only the 5-char prefix with Add-Padding: true', async () => {
    const server = startServer({ breached: [BREACHED] });
    const { checker } = onlineChecker(`${server.url}/`);
    await checker.isBreached(BREACHED);
    const { hash, prefix, suffix } = pwnedHashParts(BREACHED);
    expect(server.requests).toEqual([{ path: `/range/${prefix}`, addPadding: 'true' }]);
    const path = server.requests[0]!.path;
    for (const secret of [hash, suffix, BREACHED, encodeURIComponent(BREACHED)]) {
      expect(path).not.toContain(secret);
    }
  });

  test('padding lines with count 0 are not breaches', async () => {
    const { prefix, suffix } = pwnedHashParts(BREACHED);
    const other = pwnedHashParts('some other password').suffix;
    const server = startServer({ body: `${suffix}:0\r\n${other}:5\r\n` });
    const { checker, logs } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(false);
    expect(server.requests[0]!.path).toBe(`/range/${prefix}`);
    expect(logs).toEqual([]);
  });

  test('accepts LF line endings and lowercase suffixes', async () => {
    const { suffix } = pwnedHashParts(BREACHED);
    const server = startServer({ body: `${'A'.repeat(35)}:0\n${suffix.toLowerCase()}:3\n` });
    const { checker, logs } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(true);
    expect(logs).toEqual([]);
  });

  test('caches the verdict of a password', async () => {
    const server = startServer({ breached: [BREACHED] });
    const { checker } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(true);
    server.options.breached = [];
    expect(await checker.isBreached(BREACHED)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test('concurrent checks of one prefix share a single request', async () => {
    const server = startServer({ breached: [BREACHED], delayMs: 50 });
    const { checker } = onlineChecker(server.url);
    const results = await Promise.all([1, 2, 3].map(() => checker.isBreached(BREACHED)));
    expect(results).toEqual([true, true, true]);
    expect(server.requests).toHaveLength(1);
  });

  test('answers are not kept whole: 2,000 full range answers leave little behind', async () => {
    // A real answer lists ~800 breached suffixes; keeping each one would hold ~75 KB per prefix.
    const fullAnswer = Array.from({ length: 800 }, (_, i) => `${i.toString(16).toUpperCase().padStart(35, '0')}:${i + 1}`).join('\r\n');
    const fakeFetch = (async () => new Response(fullAnswer)) as unknown as typeof fetch;
    const { checker } = onlineChecker('http://pwned.invalid', { fetch: fakeFetch });
    Bun.gc(true);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 2_000; i++) await checker.isBreached(`memory-${i}`);
    Bun.gc(true);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20 * 1024 * 1024);
  });

  test('the cache is bounded and evicts the oldest verdict', async () => {
    const calls = new Map<string, number>();
    const fakeFetch = (async (input: string | URL | Request) => {
      const prefix = String(input).slice(-5);
      calls.set(prefix, (calls.get(prefix) ?? 0) + 1);
      return new Response(`${'A'.repeat(35)}:0`);
    }) as unknown as typeof fetch;
    const { checker } = onlineChecker('http://pwned.invalid', { fetch: fakeFetch });

    const byPrefix = new Map<string, string>();
    for (let i = 0; byPrefix.size < 10_001; i++) {
      const password = `pw-${i}`;
      const { prefix } = pwnedHashParts(password);
      if (!byPrefix.has(prefix)) byPrefix.set(prefix, password);
    }
    const passwords = [...byPrefix.values()];
    for (const password of passwords) await checker.isBreached(password);
    expect(calls.size).toBe(10_001);

    const newest = passwords.at(-1)!;
    const oldest = passwords[0]!;
    await checker.isBreached(newest);
    expect(calls.get(pwnedHashParts(newest).prefix)).toBe(1);
    await checker.isBreached(oldest);
    expect(calls.get(pwnedHashParts(oldest).prefix)).toBe(2);
  });
});

describe('online mode falls back to the bundled list', () => {
  async function expectFallback(apiBaseUrl: string, extra: Partial<BreachCheckOptions> = {}) {
    const { checker, logs } = onlineChecker(apiBaseUrl, extra);
    const strong = strongPassword();
    // 'qwertyui' rather than 'password', which the log legitimately contains as a word.
    expect(await checker.isBreached('qwertyui')).toBe(true);
    expect(await checker.isBreached(strong)).toBe(false);
    expect(logs).toHaveLength(2);
    expect(logs[0]).toContain('common-password list');
    expectLogsFreeOf(logs, 'qwertyui');
    expectLogsFreeOf(logs, strong);
    return logs;
  }

  test('when the API is unreachable', async () => {
    const logs = await expectFallback(await closedPortUrl());
    expect(logs[0]).toContain('network error');
  });

  test('when the API is slower than the timeout', async () => {
    const server = startServer({ breached: ['password'], delayMs: 5_000 });
    const { checker, logs } = onlineChecker(server.url, { timeoutMs: 200 });
    const started = performance.now();
    expect(await checker.isBreached(strongPassword())).toBe(false);
    // Answered long before the API would have (5 s), within API.md §6's own 2 s timeout.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('timeout');
    expect(await checker.isBreached('password')).toBe(true);
  });

  test('when the API answers with a non-200 status', async () => {
    const server = startServer({ status: 503 });
    const logs = await expectFallback(server.url);
    expect(logs[0]).toContain('HTTP 503');
    expect(server.requests).toHaveLength(2);
  });

  test('when the body is malformed', async () => {
    const server = startServer({ body: '<html>rate limited</html>' });
    const logs = await expectFallback(server.url);
    expect(logs[0]).toContain('malformed');
  });

  test('when a single line is malformed among valid ones', async () => {
    const { suffix } = pwnedHashParts(BREACHED);
    const server = startServer({ body: `${suffix}:7\r\n${'B'.repeat(34)}:1\r\n` });
    const { checker, logs } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(false);
    expect(logs).toHaveLength(1);
  });

  test('when the injected fetch throws an error mentioning the URL', async () => {
    const leakyFetch = (async (input: string | URL | Request) => {
      throw new Error(`connect failed: ${String(input)}`);
    }) as unknown as typeof fetch;
    await expectFallback('http://pwned.invalid', { fetch: leakyFetch });
  });

  test('failures are not cached: a recovered API is used again', async () => {
    const server = startServer({ status: 500, breached: [BREACHED] });
    const { checker, logs } = onlineChecker(server.url);
    expect(await checker.isBreached(BREACHED)).toBe(false);
    server.options.status = undefined;
    expect(await checker.isBreached(BREACHED)).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(logs).toHaveLength(1);
  });
});

describe('other modes', () => {
  test('offline uses only the bundled list and makes no request', async () => {
    const server = startServer({ breached: [BREACHED] });
    const { checker, logs } = onlineChecker(server.url, { mode: 'offline' });
    expect(await checker.isBreached('password123')).toBe(true);
    expect(await checker.isBreached(BREACHED)).toBe(false);
    expect(server.requests).toHaveLength(0);
    expect(logs).toEqual([]);
  });

  test('off never reports a breach and makes no request', async () => {
    const server = startServer({ breached: ['password'] });
    const { checker } = onlineChecker(server.url, { mode: 'off' });
    expect(await checker.isBreached('password')).toBe(false);
    expect(await checker.isBreached('12345678')).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});
