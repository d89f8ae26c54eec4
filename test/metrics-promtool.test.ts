import { afterAll, describe, expect, test } from 'bun:test';
import { ensureDebianPackages, reportSkipped } from './support/debian-packages';
import { startFakePwnedServer } from './support/fake-pwned-server';
import { parseSamples, sumOf } from './support/prom-text';
import { startServer, tempDirsOfThisFile } from './support/server-process';

/**
 * The real server after a varied load, scraped and checked by Prometheus's own promtool (Debian's
 * `prometheus` package): the exposition must pass `promtool check metrics` (format and naming
 * lints), and the counters must match the requests that were sent.
 */
const promtool = await ensureDebianPackages([
  { name: 'prometheus', provides: '/usr/bin/promtool' },
  { name: 'prometheus', provides: '/usr/bin/prometheus' },
]);
const skip = reportSkipped('promtool check of GET /metrics', promtool);
const tempDir = tempDirsOfThisFile();
const pwned = startFakePwnedServer({ breached: ['breached password 1'] });
afterAll(() => pwned.stop());

async function promtoolCheck(exposition: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(['/usr/bin/promtool', 'check', 'metrics'], { stdin: new Blob([exposition]), stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: `${out}${err}`.trim() };
}

describe.skipIf(skip)('GET /metrics of a running server', () => {
  test('passes promtool check metrics, and counts exactly what was sent', async () => {
    const server = await startServer({ dir: tempDir(), args: ['serve', '--port', '0', '--dir', tempDir(), '--secret', 'metrics-secret-0123456789', '--pwned-api-url', pwned.url] });
    const sent = new Map<string, number>();
    const send = async (method: string, path: string, route: string, body?: unknown, auth = true) => {
      const res = auth ? await server.request(method, path, body) : await fetch(`${server.url}${path}`, { method });
      const text = await res.text();
      const key = `${method} ${route} ${res.status}`;
      sent.set(key, (sent.get(key) ?? 0) + 1);
      return { status: res.status, json: () => JSON.parse(text) };
    };
    // Breach checks: one from the API, a repeat from the cache, and the bundled list while the API is down.
    const user = (await send('POST', '/users', '/users', { password: 'a strong password 1' })).json();
    await send('POST', '/users', '/users', { password: 'breached password 1' });
    await send('POST', '/users', '/users', { password: 'breached password 1' });
    pwned.options.status = 503;
    await send('POST', '/users', '/users', { password: 'qwertyui' });
    pwned.options.status = 200;
    for (let i = 0; i < 3; i++) await send('GET', `/users/${user.id}`, '/users/:id');
    await send('GET', '/users/nobody', '/users/:id');
    await send('GET', '/users?per_page=2', '/users');
    for (let i = 0; i < 7; i++) await send('POST', `/users/${user.id}/verify-password`, '/users/:id/verify-password', { password: 'wrong password!', client_ip: '192.0.2.9' });
    await send('POST', '/users/x/y/z', 'unmatched', {});
    await send('GET', '/users', 'unmatched', undefined, false);
    await send('GET', '/events?limit=5', '/events');
    await send('GET', '/events?limit=0', '/events');
    await send('DELETE', `/users/${user.id}`, '/users/:id');

    const scrape = await server.request('GET', '/metrics');
    const exposition = await scrape.text();
    expect(scrape.headers.get('content-type')).toStartWith('text/plain; version=0.0.4');
    expect(await promtoolCheck(exposition)).toEqual({ code: 0, output: '' });

    const samples = parseSamples(exposition);
    const counted = new Map(
      samples.filter((s) => s.name === 'gatehouse_http_requests_total').map((s) => [`${s.labels.method} ${s.labels.route} ${s.labels.status}`, s.value]),
    );
    expect(counted).toEqual(sent);
    // The histogram is by method and route: its count is exactly the requests sent there, whatever their status.
    const sentByRoute = new Map<string, number>();
    for (const [key, n] of sent) {
      const route = key.split(' ').slice(0, 2).join(' ');
      sentByRoute.set(route, (sentByRoute.get(route) ?? 0) + n);
    }
    const histogramCounts = new Map(
      samples.filter((s) => s.name === 'gatehouse_http_request_duration_seconds_count').map((s) => [`${s.labels.method} ${s.labels.route}`, s.value]),
    );
    expect(histogramCounts).toEqual(sentByRoute);
    expect(sumOf(samples, 'gatehouse_breach_check_answers_total', { source: 'api' })).toBe(2);
    expect(sumOf(samples, 'gatehouse_breach_check_answers_total', { source: 'cache' })).toBe(1);
    expect(sumOf(samples, 'gatehouse_breach_check_answers_total', { source: 'fallback_list' })).toBe(1);
    // 5 tokens, then 2 refusals; the 5 wrong passwords also blocked the address, but the bucket refused first.
    expect(sumOf(samples, 'gatehouse_rate_limit_refusals_total', { limit: 'address' })).toBe(2);
    expect(sumOf(samples, 'gatehouse_users')).toBe(0);
    expect(sumOf(samples, 'gatehouse_password_hashes_in_flight')).toBe(0);
    expect(sumOf(samples, 'gatehouse_password_hashes_queued')).toBe(0);
    expect(sumOf(samples, 'gatehouse_server_busy_total')).toBe(0);
    expect(sumOf(samples, 'gatehouse_webhook_deliveries', { state: 'pending' })).toBe(0);
    expect(await server.stop()).toBe(0);
  }, 60_000);

  test('Prometheus itself scrapes it, with a secret of the form "<type> <credentials>"', async () => {
    // Prometheus sends `Authorization: <type> <credentials>` and cannot send a bare value, so the
    // secret carries a space and the scrape job splits it there (docs/operating.md, Watching it run).
    const credentials = crypto.randomUUID();
    const server = await startServer({ dir: tempDir(), args: ['serve', '--port', '0', '--dir', tempDir(), '--secret', `Gatehouse ${credentials}`, '--pwned-check', 'off'] });
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const promPort = probe.port;
    probe.stop(true);
    const dir = tempDir();
    const config = `global: { scrape_interval: 1s }\nscrape_configs:\n  - job_name: gatehouse\n    static_configs: [{ targets: ['127.0.0.1:${server.port}'] }]\n    authorization: { type: Gatehouse, credentials: '${credentials}' }\n`;
    await Bun.write(`${dir}/prometheus.yml`, config);
    const prometheus = Bun.spawn(
      ['/usr/bin/prometheus', `--config.file=${dir}/prometheus.yml`, `--storage.tsdb.path=${dir}/tsdb`, `--web.listen-address=127.0.0.1:${promPort}`],
      { stdout: 'ignore', stderr: 'pipe' },
    );
    try {
      const query = async (promql: string) => {
        const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined);
        const body = res?.ok ? ((await res.json()) as { data: { result: { value: [number, string] }[] } }) : undefined;
        return body?.data.result.map((r) => Number(r.value[1])) ?? [];
      };
      let scraped: number[] = [];
      for (let i = 0; i < 150 && scraped.length === 0; i++) {
        await Bun.sleep(100);
        scraped = await query('gatehouse_http_requests_total{job="gatehouse",route="/metrics",status="200"}');
      }
      expect(scraped.length).toBe(1);
      expect(scraped[0]).toBeGreaterThanOrEqual(1);
      expect(await query('up{job="gatehouse"}')).toEqual([1]);
    } finally {
      prometheus.kill();
      await prometheus.exited;
      await server.stop();
    }
  }, 60_000);

  test('--no-metrics: the path is not there', async () => {
    const server = await startServer({ dir: tempDir(), extraArgs: ['--no-metrics'] });
    const res = await server.request('GET', '/metrics');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'NOT_FOUND' });
    expect(await server.stop()).toBe(0);
  });
});
