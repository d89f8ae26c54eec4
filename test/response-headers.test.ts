import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { type ServerProcess, startServer, tempDirsOfThisFile } from './support/server-process';

const h = createHarness();

describe('headers on every answer (API.md §9)', () => {
  test('nosniff and no-store on successes, refusals before routing, errors and 204s', async () => {
    const user = await h.createUser();
    const answers = [
      await h.call('GET', '/'),
      await h.call('GET', '/health', { auth: null }),
      await h.call('POST', '/users', { body: { password: STRONG_PASSWORD } }),
      await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD } }),
      await h.call('POST', `/users/${user.id}/regenerate-recovery-code`),
      await h.call('GET', '/users', { auth: null }),
      await h.call('GET', '/users', { auth: 'wrong secret 0123456789' }),
      await h.call('GET', '/no/such/route'),
      await h.call('POST', '/users', { rawBody: 'not json' }),
      await h.call('POST', '/users', { rawBody: 'x', headers: { 'content-length': String(65 * 1024) } }),
      await h.call('GET', '/docs/json', { auth: null }),
      await h.call('HEAD', `/users/${user.id}`),
      await h.call('OPTIONS', '/users'),
      await h.call('DELETE', `/users/${user.id}`),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 204, 200, 401, 401, 404, 400, 413, 200, 200, 404, 204]);
    for (const res of answers) {
      expect({ status: res.status, nosniff: res.headers.get('x-content-type-options'), cache: res.headers.get('cache-control') }).toEqual({
        status: res.status,
        nosniff: 'nosniff',
        cache: 'no-store',
      });
    }
  });

  test('also on an unexpected failure (500) and on /health answering 503', async () => {
    const broken = createHarness();
    await broken.ready;
    // Its database closed under it: SQLite's handle, or every instance's PostgreSQL pool.
    if (broken.backend.kind === 'sqlite') broken.backend.db.$client.close();
    else await Promise.all(broken.instances.map((instance) => instance.close()));
    for (const res of [await broken.call('GET', '/users'), await broken.call('GET', '/health', { auth: null })]) {
      expect([res.status, res.headers.get('x-content-type-options'), res.headers.get('cache-control')]).toEqual([res.status, 'nosniff', 'no-store']);
      expect(res.status).toBeGreaterThanOrEqual(500);
    }
  });

  test('the docs page adds a same-origin CSP, no framing and no referrer', async () => {
    const page = await h.call('GET', '/docs', { auth: null });
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // Nothing beyond the page's own origin: no other host, no inline script, no eval.
    expect(csp).not.toMatch(/https?:|\*|'unsafe-inline'|'unsafe-eval'/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('cache-control')).toBe('no-store');
    // The page carries no inline script for the CSP to block.
    expect(page.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
  });

  test('the docs static assets may be cached: they are the same for every caller of a version', async () => {
    const page = await h.call('GET', '/docs', { auth: null });
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBe(3);
    for (const source of sources) {
      const asset = await h.call('GET', source, { auth: null });
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=86400');
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

/** Sends exactly these bytes on a fresh connection and returns everything the server wrote before closing. */
async function rawExchange(port: number, request: string): Promise<string> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(request)}`)), 5_000);
    void Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (socket) => void socket.write(request),
        data: (_, data) => void chunks.push(Buffer.from(data)),
        close: () => {
          clearTimeout(timer);
          resolve();
        },
        error: (_, error) => reject(error),
      },
    });
  });
  return Buffer.concat(chunks).toString();
}

const parseAnswer = (raw: string) => {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0], head: head.toLowerCase(), body };
};

describe('requests without a usable Host, on the real server', () => {
  const newDir = tempDirsOfThisFile();
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ dir: newDir() });
  });
  afterAll(async () => {
    await server?.stop();
  });

  // Bun hands these on with a relative or unparseable URL; they used to answer GET /users with a 500.
  const hosts = [['no Host (HTTP/1.0)', ''], ['an empty Host', 'Host:\r\n'], ['Host: a b', 'Host: a b\r\n'], ['Host: h:99999', 'Host: h:99999\r\n'], ['Host: [::1', 'Host: [::1\r\n'], ['Host: a%zz', 'Host: a%zz\r\n']];

  test.each(hosts)('%s: routed by the path, with the credential check and JSON answers', async (_, host) => {
    const ask = async (path: string, auth: boolean) =>
      parseAnswer(await rawExchange(server.port, `GET ${path} HTTP/1.0\r\n${host}${auth ? `Authorization: ${server.secret}\r\n` : ''}\r\n`));
    const health = await ask('/health', false);
    expect(health.statusLine).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    const list = await ask('/users?per_page=1', true);
    expect(list.statusLine).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(list.body)).toEqual([]);
    expect(list.head).toContain('x-pagination-total: 0');
    const refused = await ask('/users', false);
    expect(refused.statusLine).toBe('HTTP/1.1 401 Unauthorized');
    expect(JSON.parse(refused.body)).toEqual({ error: 'NOT_AUTHENTICATED' });
    const missing = await ask('/users/nosuchuser2222222222222', true);
    expect(JSON.parse(missing.body)).toEqual({ error: 'NOT_FOUND' });
  });

  test('HTTP/1.1 without Host: Bun itself answers an empty 400 before any handler runs (docs/api-decisions.md)', async () => {
    const answer = await rawExchange(server.port, `GET /health HTTP/1.1\r\nAuthorization: ${SECRET}\r\n\r\n`);
    // If Bun starts handing these requests on, this fails: then they get our JSON answers and docs/api-decisions.md changes.
    expect(answer).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });
});
