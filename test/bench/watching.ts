// Issue 15's costs: GET /users/{id} and verify-password with metrics on and off, and webhook delivery
// of 10,000 events to a local receiver. Part of `bun run bench`; alone: `bun run test/bench/watching.ts`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/client';
import { ARGON2 } from './hashing';
import { cpuTicks, waitForIdle } from './proc';
import { machine, mean, type Row, table, target, type Target, targetLines } from './report';
import { seedUsers } from './seed';
import { type RunningServer, startProcess } from './server';
import { ensureWrk, type LoadSettings, runWrk } from './wrk';

const SECRET = 'bench-secret-0123456789';
const PASSWORD = 'bench password 0123';
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
const EVENTS = 10_000;
const log = (message: string) => console.error(`[bench] ${message}`);

function start(dir: string, extra: string[] = []): Promise<RunningServer> {
  return startProcess([process.execPath, 'run', 'src/main.ts', 'serve', '--port', '0', '--dir', dir, '--secret', SECRET, '--pwned-check', 'off', ...extra]);
}

async function cpuPerRequest(server: RunningServer, name: string, settings: LoadSettings, path: string, body?: string): Promise<Row> {
  log(name);
  const request = { url: server.baseUrl + path, method: body === undefined ? ('GET' as const) : ('POST' as const), body, headers: { authorization: SECRET } };
  await runWrk(request, { ...settings, seconds: 1 });
  await waitForIdle(server.pid);
  const before = cpuTicks(server.pid);
  const result = await runWrk(request, settings);
  const cpuUs = ((cpuTicks(server.pid) - before) * 10_000) / Math.max(1, result.requests);
  await waitForIdle(server.pid);
  return { scenario: name, load: result, cpuUs };
}

/** Metrics off and on, twice each in turn (off, on, off, on), so drift on a shared machine hits both alike. */
async function metricsCost(dir: string, userId: string, settings: LoadSettings) {
  const rows: Record<'on' | 'off', Row[]> = { on: [], off: [] };
  const verify: Record<'on' | 'off', Row | undefined> = { on: undefined, off: undefined };
  for (const round of [1, 2]) {
    for (const mode of ['off', 'on'] as const) {
      const server = await start(dir, mode === 'off' ? ['--no-metrics'] : []);
      try {
        rows[mode].push(await cpuPerRequest(server, `GET /users/{id}, metrics ${mode} (run ${round})`, settings, `/users/${userId}`));
        if (round === 1) verify[mode] = await cpuPerRequest(server, `POST /users/{id}/verify-password, metrics ${mode}`, settings, `/users/${userId}/verify-password`, JSON.stringify({ password: PASSWORD }));
      } finally {
        await server.stop();
      }
    }
  }
  return { rows, verify: verify as Record<'on' | 'off', Row> };
}

/** A receiver in this process: first arrival time per event id and per user; 204 to everything. */
function receiver() {
  const arrivals = new Map<number, number>();
  const byUser = new Map<string, number>();
  let requests = 0;
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      requests++;
      const event = (await request.json()) as { id: number; user_id: string };
      if (!arrivals.has(event.id)) {
        arrivals.set(event.id, performance.now());
        byUser.set(event.user_id, performance.now());
      }
      return new Response(null, { status: 204 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, arrivals, byUser, requests: () => requests, stop: () => server.stop(true) };
}

const waitFor = async (done: () => boolean, what: string, timeoutMs = 300_000) => {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await Bun.sleep(5);
  }
};

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** A backlog of 10,000 outbox rows written before start: how fast the sender drains it. */
async function webhookBacklog(dir: string): Promise<Row> {
  log(`webhook backlog: ${EVENTS} events`);
  const db = openDatabase(dir).$client;
  const now = Math.floor(Date.now() / 1000);
  const insert = db.prepare("insert into events (time, type, user_id) values (?, 'user.created', 'bench')");
  db.transaction(() => {
    for (let i = 0; i < EVENTS; i++) insert.run(now);
    db.run('insert into webhook_deliveries (event_id) select id from events where id not in (select event_id from webhook_deliveries)');
  })();
  db.close();
  const hook = receiver();
  const started = performance.now();
  const server = await start(dir, ['--webhook-url', hook.url, '--webhook-secret', WEBHOOK_SECRET]);
  const cpuBefore = cpuTicks(server.pid);
  try {
    await waitFor(() => hook.arrivals.size >= EVENTS, 'the backlog to drain');
    const seconds = (performance.now() - started) / 1000;
    const cpuUs = ((cpuTicks(server.pid) - cpuBefore) * 10_000) / EVENTS;
    return { scenario: `Webhooks: drain a backlog of ${EVENTS.toLocaleString('en')} events (incl. start-up)`, perSecond: EVENTS / seconds, cpuUs, note: `events/s; ${hook.requests()} POSTs received` };
  } finally {
    await server.stop();
    hook.stop();
  }
}

/** 10,000 users deleted over HTTP, 16 at a time: delay from each DELETE's 204 to its event's arrival. */
async function webhookLatency(dir: string, ids: string[]): Promise<Row> {
  log(`webhook latency: ${ids.length} DELETE /users/{id}`);
  const hook = receiver();
  const server = await start(dir, ['--webhook-url', hook.url, '--webhook-secret', WEBHOOK_SECRET]);
  const acked = new Map<string, number>();
  try {
    const queue = [...ids];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
          const res = await fetch(`${server.baseUrl}/users/${id}`, { method: 'DELETE', headers: { authorization: SECRET } });
          if (res.status !== 204) throw new Error(`DELETE answered ${res.status}`);
          acked.set(id, performance.now());
        }
      }),
    );
    await waitFor(() => hook.arrivals.size >= ids.length, 'every user.deleted');
    const seconds = (performance.now() - started) / 1000;
    const delays = ids.map((id) => hook.byUser.get(id)! - acked.get(id)!);
    return {
      scenario: `Webhooks: ${ids.length.toLocaleString('en')} DELETE /users/{id}, event → delivery`,
      perSecond: ids.length / seconds,
      note: `events/s delivered while produced; delay after the 204: p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms`,
    };
  } finally {
    await server.stop();
    hook.stop();
  }
}

export interface WatchingResults {
  rows: Row[];
  targets: Target[];
}

/** Seeds its own users in `dir` (which must not hold a database yet) and runs every scenario above. */
export async function watchingBench(dir: string, settings: LoadSettings): Promise<WatchingResults> {
  const passwordHash = await Bun.password.hash(PASSWORD, ARGON2);
  const data = join(dir, 'watching');
  const { sampleIds } = seedUsers(data, 1_000, passwordHash);
  const { rows, verify } = await metricsCost(data, sampleIds[0]!, settings);
  const meanCpu = (list: Row[]) => mean(list.map((row) => row.cpuUs!));
  const getRatio = meanCpu(rows.on) / meanCpu(rows.off);
  // CPU per request rather than requests/s: argon2's rate swings with what else the shared cores run.
  const verifyRatio = verify.on.cpuUs! / verify.off.cpuUs!;

  const backlog = await webhookBacklog(join(dir, 'backlog'));
  const deleted = seedUsers(join(dir, 'latency'), EVENTS, passwordHash, { allIds: true }).ids;
  const latency = await webhookLatency(join(dir, 'latency'), deleted);
  return {
    rows: [...rows.off, ...rows.on, verify.off, verify.on, backlog, latency],
    targets: [
      target('GET /users/{id} CPU µs/request, metrics on ÷ off (mean of 2 runs each)', getRatio, '≤', 1.1),
      target('verify-password CPU µs/request, metrics on ÷ off', verifyRatio, '≤', 1.1),
    ],
  };
}

if (import.meta.main) {
  ensureWrk();
  const settings: LoadSettings = { connections: 32, threads: 2, seconds: Number(process.env.BENCH_SECONDS ?? 10) };
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-watching-'));
  try {
    const { rows, targets } = await watchingBench(dir, settings);
    console.log(machine(settings));
    console.log(table(rows));
    console.log(`\nTargets:\n${targetLines(targets)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
