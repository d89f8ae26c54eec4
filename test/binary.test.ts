import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as OTPAuth from 'otpauth';
import { GENERATED_HASH } from './support/generated-users';
import { postgresForThisFile } from './support/postgres';
import { redisForThisFile } from './support/redis';
import { killAllServers, makeTempDir, removeDir, REPO_ROOT, runToExit, startServer } from './support/server-process';
import { newWebhookSecret, startReceiver, waitUntil } from './support/webhook-receiver';

const pg = await postgresForThisFile('compiled binary on PostgreSQL');
const redis = await redisForThisFile('compiled binary with Redis');

// The binary is copied alone into an empty directory: no node_modules, no drizzle/ beside it.
const work = makeTempDir('gatehouse-binary-');
const binary = join(work, 'gatehouse');
const dataDir = join(work, 'data');
const PASSWORD = 'binary test password one';
const NEW_PASSWORD = 'binary test password two';

beforeAll(async () => {
  const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: REPO_ROOT, stdout: 'pipe', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`);
  copyFileSync(join(REPO_ROOT, 'dist/gatehouse'), binary);
  expect(readdirSync(work)).toEqual(['gatehouse']);
}, 120_000);

afterAll(async () => {
  await killAllServers();
  removeDir(work);
});

const start = () => startServer({ command: [binary], cwd: work, args: ['serve', '--port', '0', '--dir', dataDir, '--pwned-check', 'offline'] });

describe('compiled binary', () => {
  test('prints its version and a new secret', async () => {
    const pkg = await Bun.file(join(REPO_ROOT, 'package.json')).json();
    expect((await runToExit(['--version'], { command: [binary], cwd: work })).stdout.trim()).toBe(pkg.version);
    const secret = await runToExit(['generate-secret'], { command: [binary], cwd: work });
    expect(secret.exitCode).toBe(0);
    expect(secret.stdout.trim()).toMatch(/^[a-z2-9]{40}$/);
  });

  test('serves a whole flow, stops on SIGTERM with 0, and finds its data after a restart', async () => {
    const server = await start();
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await server.request(method, path, body);
      const text = await response.text();
      return { status: response.status, json: text === '' ? undefined : JSON.parse(text) };
    };

    const user = await call('POST', '/users', { email: 'bin@example.com', password: PASSWORD });
    expect(user.status).toBe(200);
    const id = user.json.id as string;
    expect((await call('POST', `/users/${id}/verify-password`, { password: PASSWORD })).status).toBe(204);

    const reset = await call('POST', `/users/${id}/password-reset-requests`, {});
    expect(reset.status).toBe(200);
    expect((await call('POST', `/password-reset-requests/${reset.json.id}/verify-email`, { code: reset.json.code })).status).toBe(204);
    expect((await call('POST', '/reset-password', { request_id: reset.json.id, password: NEW_PASSWORD })).status).toBe(204);

    const key = new OTPAuth.Secret({ size: 20 });
    const totp = new OTPAuth.TOTP({ secret: key, algorithm: 'SHA1', digits: 6, period: 30 });
    const now = Date.now();
    const registered = await call('POST', `/users/${id}/register-totp`, { key: Buffer.from(key.bytes).toString('base64'), code: totp.generate({ timestamp: now }) });
    expect(registered.status).toBe(200);
    // The registering code's step is used up; the next step's code is inside the ±1 window.
    expect((await call('POST', `/users/${id}/verify-2fa/totp`, { code: totp.generate({ timestamp: now + 30_000 }) })).status).toBe(204);

    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const asset of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']) {
      expect(html).toContain(asset);
      const response = await fetch(`${server.url}${asset}`);
      expect(response.status).toBe(200);
      expect((await response.text()).length).toBeGreaterThan(10_000);
    }
    const document = (await (await fetch(`${server.url}/docs/json`)).json()) as { paths: Record<string, unknown> };
    expect(document.paths['/reset-password']).toBeDefined();

    expect(await server.stop('SIGTERM')).toBe(0);

    const again = await start();
    const found = await again.request('GET', `/users/${id}`);
    expect(await found.json()).toMatchObject({ id, email: 'bin@example.com', email_verified: true, registered_totp: true });
    expect((await again.request('POST', `/users/${id}/verify-password`, { password: NEW_PASSWORD })).status).toBe(204);
    expect(await again.stop('SIGTERM')).toBe(0);
  }, 60_000);

  test('serves /metrics (prom-client inside the binary) and /events, and sends signed webhooks', async () => {
    const webhookSecret = newWebhookSecret();
    const receiver = startReceiver(webhookSecret);
    const server = await startServer({
      command: [binary],
      cwd: work,
      args: ['serve', '--port', '0', '--dir', join(work, 'watch'), '--pwned-check', 'offline', '--webhook-url', receiver.url, '--webhook-secret', webhookSecret],
    });
    try {
      const user = (await (await server.request('POST', '/users', { password: PASSWORD })).json()) as { id: string };
      await waitUntil(() => receiver.deliveries.length === 1, 10_000, 'the delivery');
      expect(receiver.deliveries[0]!.verified).toMatchObject({ ok: true, payload: { id: 1, type: 'user.created', user_id: user.id } });
      const events = await (await server.request('GET', '/events')).json();
      expect(events).toEqual([receiver.deliveries[0]!.verified.ok && receiver.deliveries[0]!.verified.payload]);
      const metrics = await (await server.request('GET', '/metrics')).text();
      expect(metrics).toContain('gatehouse_http_requests_total{method="POST",route="/users",status="200"} 1');
      expect(metrics).toContain('gatehouse_breach_check_answers_total{source="fallback_list"} 1');
      expect(metrics).toContain('gatehouse_users 1');
      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      receiver.stop();
    }
  }, 60_000);

  test('service keys (API.md §17): keys add and list, serve --keys-file with scopes, reload on change, actor on events', async () => {
    const keysFile = join(work, 'service-keys');
    const keys = (args: string[]) => runToExit(['keys', ...args, '--keys-file', keysFile], { command: [binary], cwd: work });
    const app = await keys(['add', 'app', '--scope', '*']);
    expect(app.exitCode).toBe(0);
    const appKey = app.stdout.trim();
    expect(appKey).toMatch(/^ghk_[A-Za-z0-9_-]{43}$/);
    expect((await keys(['add', 'support', '--scope', 'nope'])).exitCode).toBe(2);
    expect((await runToExit(['keys', 'add', '--help'], { command: [binary], cwd: work })).stdout).toContain('gatehouse keys add NAME');
    const server = await startServer({ command: [binary], cwd: work, args: ['serve', '--port', '0', '--dir', join(work, 'keys-data'), '--pwned-check', 'offline', '--keys-file', keysFile] });
    const send = (key: string, method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, { method, headers: { authorization: key }, body: body === undefined ? undefined : JSON.stringify(body) });
    try {
      const user = (await (await send(appKey, 'POST', '/users', { password: PASSWORD })).json()) as { id: string };
      const support = await keys(['add', 'support', '--scope', 'read']);
      const supportKey = support.stdout.trim();
      await waitUntil(async () => (await send(supportKey, 'GET', `/users/${user.id}`)).status === 200, 10_000, 'the reloaded key');
      expect((await send(supportKey, 'DELETE', `/users/${user.id}`)).status).toBe(403);
      expect((await send(supportKey, 'DELETE', '/users/nosuchuser')).status).toBe(403);
      expect((await send('ghk_unknown', 'GET', `/users/${user.id}`)).status).toBe(401);
      const events = (await (await send(supportKey, 'GET', '/events')).json()) as { actor: string }[];
      expect(events.map((event) => event.actor)).toEqual(['app']);
      // Access lines leave in batches every 10 ms: wait for the last ones.
      const seen = () => new Set(server.lines.filter((line) => line.status !== undefined).map((line) => `${line.status} ${line.key}`));
      await waitUntil(() => seen().has('403 support') && seen().has('200 support'), 5_000, 'the access lines');
      expect(seen()).toEqual(new Set(['200 app', '200 support', '403 support', '401 null']));
      expect(JSON.stringify(server.lines)).not.toContain('ghk_');
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);

  test('imports, exports and backs up', async () => {
    const dir = join(work, 'transfer');
    // More than the first transaction's 2,000 lines: the later ones start the checkpoint thread, another entry point of the binary.
    const lines = Array.from({ length: 5_000 }, (_, i) => JSON.stringify({ id: `imported-${i}`, created_at: 1_700_000_000 + i, email: `i${i}@example.com`, password_hash: GENERATED_HASH }));
    writeFileSync(join(work, 'in.ndjson'), `${lines.join('\n')}\n`);
    const run = (args: string[]) => runToExit([...args, '--dir', dir], { command: [binary], cwd: work, timeoutMs: 60_000 });
    const imported = await run(['import', 'in.ndjson']);
    expect(imported.exitCode).toBe(0);
    expect(imported.stderr).toContain('imported 5000 users');
    expect((await run(['export', 'out.ndjson'])).exitCode).toBe(0);
    const exported = readFileSync(join(work, 'out.ndjson'), 'utf8').trim().split('\n');
    expect(exported.map((line) => JSON.parse(line).id)).toEqual(lines.map((line) => JSON.parse(line).id));
    expect((await run(['backup', 'copy.db'])).exitCode).toBe(0);
    const copy = new Database(join(work, 'copy.db'), { readonly: true });
    expect(copy.query("SELECT count(*) AS n FROM events WHERE type = 'user.imported'").get()).toEqual({ n: 5_000 });
    copy.close();
  }, 120_000);

  test.skipIf(pg.skip || redis.skip)('runs two instances on PostgreSQL and Redis: migrations embedded, state and limits shared', async () => {
    const { url } = await pg.server().freshDatabase();
    const secret = 'binary-on-postgres-secret-0123';
    const flags = ['serve', '--port', '0', '--pwned-check', 'offline', '--secret', secret, '--database-url', url, '--redis-url', redis.server().url];
    const [a, b] = await Promise.all([0, 1].map((i) => startServer({ command: [binary], cwd: work, args: [...flags, '--dir', join(work, `pg${i}`)] })));
    const user = (await (await a!.request('POST', '/users', { password: PASSWORD, email: 'pg@example.com' })).json()) as { id: string };
    expect(await (await b!.request('GET', `/users/${user.id}`)).json()).toMatchObject({ id: user.id, email: 'pg@example.com' });
    const ip = '198.51.100.77';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await (i % 2 ? a! : b!).request('POST', `/users/${user.id}/verify-password`, { password: PASSWORD, client_ip: ip })).status);
    // One bucket of five tokens for the address, whichever instance is asked.
    expect(statuses).toEqual([204, 204, 204, 204, 204, 400]);
    expect(await (await b!.request('GET', '/events')).json()).toMatchObject([{ type: 'user.created', user_id: user.id }]);
    expect(await Promise.all([a!.stop('SIGTERM'), b!.stop('SIGTERM')])).toEqual([0, 0]);
  }, 60_000);
});
