// `bun run bench`: Gatehouse against its HTTP and hashing ceilings, measured in one run (issue 6).
// Each ceiling runs right before the scenarios compared with it, so drift on a shared machine hurts the ratios less.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiKeysBench } from './api-keys';
import { dataSizeBench } from './data-size';
import { floorBench } from './floor';
import { ARGON2, hashingCeiling, slicedHashLoop } from './hashing';
import { cpuTicks, readMemory, waitForIdle, withPeakRss } from './proc';
import { registerPasskey, WEBAUTHN_FLAGS, writeLoginBodies } from './passkeys';
import { machine, type Row, table, target, type Target, targetLines } from './report';
import { seedUsers } from './seed';
import { scaleOutBench } from './scale-out';
import { severalBench } from './several';
import { keysBench } from './service-keys';
import { transferBench } from './transfer';
import { measureStartup, type RunningServer, startBareServer, startGatehouse } from './server';
import { watchingBench } from './watching';
import { ensureWrk, type LoadSettings, type Request, runWrk } from './wrk';

const ROOT = join(import.meta.dir, '..', '..');
const SECRET = 'bench-secret-0123456789';
const PASSWORD = 'bench password 0123';
const SMALL = 1_000;
const LARGE = 1_000_000;
const PER_PAGE = 20; // the default page size

const settings: LoadSettings = { connections: 32, threads: 2, seconds: Number(process.env.BENCH_SECONDS ?? 10) };
const log = (message: string) => console.error(`[bench] ${message}`);
const count = (n: number) => n.toLocaleString('en');

/** A 1 s warm-up (JIT, caches), then the measured run; the server drains what wrk left queued after each. */
async function measure(server: RunningServer, name: string, request: Request, warmup: Request | null = request): Promise<Row> {
  log(name);
  if (warmup !== null) await runWrk(warmup, { ...settings, seconds: 1 });
  await waitForIdle(server.pid);
  const cpuBefore = cpuTicks(server.pid);
  const { result, peakRssMb } = await withPeakRss(server.pid, () => runWrk(request, settings));
  const cpuUs = ((cpuTicks(server.pid) - cpuBefore) * 10_000) / Math.max(1, result.requests);
  await waitForIdle(server.pid);
  return { scenario: name, load: result, peakRssMb, cpuUs };
}

function scenario(server: RunningServer, name: string, request: Omit<Request, 'url' | 'headers'> & { path: string }): Promise<Row> {
  const headers = { authorization: SECRET, 'content-type': 'application/json' };
  return measure(server, name, { ...request, url: server.baseUrl + request.path, headers });
}

/**
 * POST /authenticate/passkey, every request with its own challenge. The warm-up second also tells
 * how many bodies the measured run needs: twice what that rate would use, so none repeats.
 */
async function passkeyLogins(server: RunningServer, dir: string, userId: string): Promise<Row> {
  const authenticator = await registerPasskey(server.baseUrl, SECRET, userId);
  const request = (bodiesFile: string): Request => ({
    url: `${server.baseUrl}/authenticate/passkey`,
    method: 'POST',
    headers: { authorization: SECRET, 'content-type': 'application/json' },
    bodiesFile,
  });
  log('passkey logins: warm-up');
  await writeLoginBodies(join(dir, 'data'), authenticator, 20_000, join(dir, 'passkey-warmup.txt'));
  const warm = await runWrk(request(join(dir, 'passkey-warmup.txt')), { ...settings, seconds: 1 });
  const count = Math.max(20_000, Math.ceil(warm.requestsPerSecond * settings.seconds * 2));
  log(`passkey logins: signing ${count} assertions`);
  await writeLoginBodies(join(dir, 'data'), authenticator, count, join(dir, 'passkey-bodies.txt'));
  return measure(server, 'POST /authenticate/passkey', request(join(dir, 'passkey-bodies.txt')), null);
}

async function bareCeiling(): Promise<Row> {
  const bare = await startBareServer();
  try {
    return await measure(bare, 'Ceiling: bare `Bun.serve`, fixed JSON', { url: `${bare.baseUrl}/` });
  } finally {
    await bare.stop();
  }
}

async function verifyCeiling(): Promise<Row> {
  log('ceiling: argon2id verify in-process');
  const cpuBefore = cpuTicks(process.pid);
  const { perSecond, verifies } = await hashingCeiling(settings.connections, settings.seconds);
  const cpuUs = ((cpuTicks(process.pid) - cpuBefore) * 10_000) / verifies;
  return { scenario: `Ceiling: \`Bun.password.verify\` ×${settings.connections} in flight, in-process`, perSecond, cpuUs, note: 'verifies/s' };
}

async function main() {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  try {
    const passwordHash = await Bun.password.hash(PASSWORD, ARGON2);
    log('a sliced JS hash loop (phpass, 2^17 MD5 rounds)');
    const sliced = await slicedHashLoop();
    const slicedRow: Row = { scenario: 'Imported phpass hash, 2^17 rounds, checked in event-loop slices (in-process)', note: `${sliced.checkMs.toFixed(0)} ms a check; event loop held at most ${sliced.longestGapMs.toFixed(1)} ms` };
    const small = seedUsers(join(dir, 'data'), SMALL, passwordHash);
    const userId = small.sampleIds[0]!;

    let server = await startGatehouse(join(dir, 'data'), SECRET, WEBAUTHN_FLAGS);
    // BENCH_ONLY=passkey: verify-password and the passkey login only, side by side.
    if (process.env.BENCH_ONLY === 'passkey') return await passkeyOnly(server, dir, userId);
    // Start-up garbage goes back to the OS within half a second of listening; idle is what stays after that.
    await Bun.sleep(1000);
    const idle = await withPeakRss(server.pid, () => Bun.sleep(3000));
    const idleRow: Row = { scenario: 'Idle (1 to 4 s after listening)', peakRssMb: idle.peakRssMb, note: `VmHWM since start ${readMemory(server.pid)?.hwmMb.toFixed(1)} MB` };
    const bare = await bareCeiling();
    const floor = await floorRounds(dir, server, userId);
    const getUser = await scenario(server, `GET /users/{id} (${count(SMALL)} users)`, { path: `/users/${userId}` });
    const listSmall = await scenario(server, `GET /users page 1 (${count(SMALL)} users)`, { path: '/users' });
    const hashing = await verifyCeiling();
    const verify = await scenario(server, 'POST /users/{id}/verify-password', {
      path: `/users/${userId}/verify-password`,
      method: 'POST',
      body: JSON.stringify({ password: PASSWORD }),
    });
    const passkeyLogin = await passkeyLogins(server, dir, userId);
    const logLines = server.lines();
    const exitSmall = await server.stop();
    // Issue 36: the same read with 100 service keys, against one secret (alone: BENCH_ONLY=keys).
    const keys = await keysRounds(dir, userId);

    log(`seeding up to ${count(LARGE)} users`);
    const large = seedUsers(join(dir, 'data'), LARGE - SMALL, passwordHash);
    const seedSeconds = (small.ms + large.ms) / 1000;

    server = await startGatehouse(join(dir, 'data'), SECRET);
    const listLarge = await scenario(server, `GET /users page 1 (${count(LARGE)} users)`, { path: '/users' });
    const lastPage = await scenario(server, `GET /users last page (${count(LARGE)} users)`, { path: `/users?page=${LARGE / PER_PAGE}` });
    const create = await scenario(server, 'POST /users (no email; 2 hashes each)', {
      path: '/users',
      method: 'POST',
      body: JSON.stringify({ password: PASSWORD }),
    });
    const exitLarge = await server.stop();

    log('start-up of dist/gatehouse');
    const startupMs = await compiledStartup(join(dir, 'startup'));
    const startup: Row = { scenario: 'Start-up: `dist/gatehouse` spawn → first 200 on /health', note: startupMs === null ? 'not built' : `${startupMs.toFixed(0)} ms` };
    // Issue 15: metrics on and off, webhook delivery (alone: bun run test/bench/watching.ts).
    const watching = await watchingBench(dir, settings);
    // Issue 13: PostgreSQL + Redis, one and two instances (alone: BENCH_ONLY=several).
    const several = await severalBench(dir, settings, log);
    // Issue 22: pinned instances, and the event write rate before and after the lock change (alone: BENCH_ONLY=scale-out).
    const scaleOut = await scaleOutBench(dir, settings, log);

    const rate = (row: Row) => row.load?.requestsPerSecond ?? row.perSecond ?? NaN;
    const targets: Target[] = [
      target('GET /users/{id} ÷ bare Bun.serve', rate(getUser) / rate(bare), '≥', 0.6),
      ...floor.targets,
      ...keys.targets,
      target('verify-password ÷ hashing ceiling', rate(verify) / rate(hashing), '≥', 0.9),
      target('verify-password p99 ÷ p50', verify.load!.p99Ms / verify.load!.p50Ms, '≤', 4),
      target('authenticate/passkey ÷ verify-password', rate(passkeyLogin) / rate(verify), '≥', 20),
      target('GET /users page 1, 1M users ÷ 1k users', rate(listLarge) / rate(listSmall), '≥', 0.5),
      target('peak RSS under verify-password, MB', verify.peakRssMb!, '≤', 250),
      target('peak RSS idle, MB', idle.peakRssMb, '≤', 80),
      // The check really runs its 131,072 MD5 calls (55-100 ms on an idle machine), yet never holds the loop long.
      target('phpass 2^17 rounds, ms a check', sliced.checkMs, '≥', 40),
      target('event loop held during it, longest ms', sliced.longestGapMs, '≤', 25),
    ];

    console.log(machine(settings));
    console.log(`Seeding ${count(LARGE)} users through the database layer took ${seedSeconds.toFixed(1)} s.\n`);
    console.log(table([bare, hashing, slicedRow, idleRow, getUser, listSmall, verify, passkeyLogin, listLarge, lastPage, create, startup]));
    console.log(`\nTargets:\n${targetLines(targets)}`);
    console.log(`\nGET /users/{id} against the floor, rounds interleaved:\n${table(floor.rows)}\n\n${floor.reference}`);
    console.log(`\nGET /users/{id} with 100 service keys against one secret, rounds interleaved:\n${table(keys.rows)}`);
    console.log(`\nWatching it run (metrics, events, webhooks):\n${table(watching.rows)}\n\nTargets:\n${targetLines(watching.targets)}`);
    console.log(severalReport(several));
    console.log(scaleOutReport(scaleOut));
    console.log(
      `\nServer exit codes on SIGTERM: ${exitSmall}, ${exitLarge}; access-log lines written by the first server: ${count(logLines)}.`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function passkeyOnly(server: RunningServer, dir: string, userId: string): Promise<void> {
  const verify = await scenario(server, 'POST /users/{id}/verify-password', { path: `/users/${userId}/verify-password`, method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
  const passkeyLogin = await passkeyLogins(server, dir, userId);
  await server.stop();
  const rate = (row: Row) => row.load!.requestsPerSecond;
  console.log(machine(settings));
  console.log(table([verify, passkeyLogin]));
  console.log(`\nTargets:\n${targetLines([target('authenticate/passkey ÷ verify-password', rate(passkeyLogin) / rate(verify), '≥', 20)])}`);
}

/** Issue 26: the floor of the stack, FLOOR_ROUNDS (default 6, as issue 37's targets are defined) interleaved rounds on the running server. */
function floorRounds(dir: string, server: RunningServer, userId: string) {
  const measureGet = (on: RunningServer, name: string, path: string) => scenario(on, `${name}, load ${loadavg()[0]!.toFixed(1)}`, { path });
  return floorBench({ dir: join(dir, 'data'), secret: SECRET, gatehouse: server, userId, rounds: Number(process.env.FLOOR_ROUNDS ?? 6), measure: measureGet });
}

/** Issue 36: KEYS_ROUNDS (default 2) interleaved rounds of one secret and of 100 keys, each on a server of its own. */
function keysRounds(dir: string, userId: string) {
  const measureGet = (on: RunningServer, name: string, path: string, authorization: string) =>
    measure(on, `${name}, load ${loadavg()[0]!.toFixed(1)}`, { url: on.baseUrl + path, headers: { authorization } });
  return keysBench({ dir: join(dir, 'data'), secret: SECRET, userId, rounds: Number(process.env.KEYS_ROUNDS ?? 2), measure: measureGet });
}

/** BENCH_ONLY=keys: issue 36's rounds alone, on 1,000 users. */
async function keysOnly(): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-keys-'));
  try {
    const { sampleIds } = seedUsers(join(dir, 'data'), SMALL, await Bun.password.hash(PASSWORD, ARGON2));
    const keys = await keysRounds(dir, sampleIds[0]!);
    console.log(machine(settings));
    console.log(`${table(keys.rows)}\n\nTargets:\n${targetLines(keys.targets)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** BENCH_ONLY=floor: issue 26's rounds alone, on 1,000 users, then verify-password against the hashing ceiling. */
async function floorOnly(): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-floor-'));
  try {
    const { sampleIds } = seedUsers(join(dir, 'data'), SMALL, await Bun.password.hash(PASSWORD, ARGON2));
    const server = await startGatehouse(join(dir, 'data'), SECRET);
    const floor = await floorRounds(dir, server, sampleIds[0]!);
    // The password check must not pay for the read path's changes: its own ceiling, measured right before it.
    const hashing = await verifyCeiling();
    const verify = await scenario(server, 'POST /users/{id}/verify-password', { path: `/users/${sampleIds[0]}/verify-password`, method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
    await server.stop();
    const ratio = verify.load!.requestsPerSecond / hashing.perSecond!;
    console.log(machine(settings));
    console.log(`${table([...floor.rows, hashing, verify])}\n\nTargets:\n${targetLines([...floor.targets, target('verify-password ÷ hashing ceiling', ratio, '≥', 0.9)])}\n${floor.reference}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function severalReport(several: Awaited<ReturnType<typeof severalBench>>): string {
  if (several.skipped !== undefined) return `\nSeveral instances: skipped (${several.skipped})`;
  return `\nSeveral instances (PostgreSQL + Redis):\n${table(several.rows)}\n\nTargets:\n${targetLines(several.targets)}`;
}

function scaleOutReport(report: Awaited<ReturnType<typeof scaleOutBench>>): string {
  if (report.skipped !== undefined) return `\nScale-out: skipped (${report.skipped})`;
  const notes = report.notes.map((note) => `- ${note}`).join('\n');
  return `\nScale-out (PostgreSQL with fsync and synchronous_commit on, Redis):\n${table(report.rows)}\n\n${notes}\n\nTargets:\n${targetLines(report.targets)}`;
}

/** BENCH_ONLY=several: issue 13's and issue 22's scenarios alone; BENCH_ONLY=scale-out: issue 22's. */
async function severalOnly(): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-several-'));
  try {
    const several = process.env.BENCH_ONLY === 'scale-out' ? undefined : await severalBench(dir, settings, log);
    const scaleOut = await scaleOutBench(dir, settings, log);
    console.log(machine(settings));
    if (several !== undefined) console.log(severalReport(several));
    console.log(scaleOutReport(scaleOut));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function compiledStartup(dir: string): Promise<number | null> {
  const binary = join(ROOT, 'dist', 'gatehouse');
  if (!(await Bun.file(binary).exists())) {
    log('dist/gatehouse missing: bun run build');
    Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'inherit' });
  }
  return measureStartup(binary, dir);
}

/** Issue 14's scenarios, after the server's or alone with BENCH_ONLY=transfer. */
async function transfer() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-transfer-'));
  try {
    const report = await transferBench(dir, settings.seconds, log);
    if (process.env.BENCH_ONLY === 'transfer') console.log(machine(settings));
    console.log(`\n${report.lines.join('\n')}\n\nTargets:\n${targetLines(report.targets)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Issue 38: verify-api-key against the user read, on both engines (alone: BENCH_ONLY=api-keys). */
async function apiKeys(): Promise<void> {
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-api-keys-'));
  try {
    const { rows, targets } = await apiKeysBench(dir, settings, log);
    if (process.env.BENCH_ONLY === 'api-keys') console.log(machine(settings));
    console.log(`\nAPI keys:\n${table(rows)}\n\nTargets:\n${targetLines(targets)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Issue 37's scenarios, after the others or alone with BENCH_ONLY=data-size (BENCH_USERS, default 1,000,000). */
async function dataSize() {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-size-'));
  try {
    const report = await dataSizeBench(dir, settings, log);
    if (process.env.BENCH_ONLY === 'data-size') console.log(machine(settings));
    console.log(`${report.lines.join('\n')}\n\nTargets:\n${targetLines(report.targets)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.env.BENCH_ONLY === 'data-size') {
  ensureWrk();
  await dataSize();
} else if (process.env.BENCH_ONLY === 'several' || process.env.BENCH_ONLY === 'scale-out') await severalOnly();
else if (process.env.BENCH_ONLY === 'floor') await floorOnly();
else if (process.env.BENCH_ONLY === 'keys') await keysOnly();
else if (process.env.BENCH_ONLY === 'api-keys') await apiKeys();
else {
  if (process.env.BENCH_ONLY !== 'transfer') await main();
  await transfer();
  await apiKeys();
  if (process.env.BENCH_ONLY !== 'transfer') await dataSize();
}
