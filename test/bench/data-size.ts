// Issue 37 in `bun run bench` (alone: BENCH_ONLY=data-size): the same reads at 1,000 users and at
// BENCH_USERS (default 1,000,000) imported with random ids and emails, on SQLite and PostgreSQL, each
// read as a ratio of its rate at 1,000 users, in one run; both sizes are served at once, so the reads
// near their targets alternate the sizes in BENCH_DATA_SIZE_ROUNDS rounds (default 6, as the floor bench).
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_MAIN_PAGE_CACHE_KIB, SERVER_PAGE_CACHE_KIB } from '../../src/db/client';
import { writeGeneratedUsers } from '../support/generated-users';
import { postgresAvailability, startPostgres, type PostgresServer } from '../support/postgres';
import { readMemory, waitForIdle } from './proc';
import { mean, target, type Target } from './report';
import { startGatehouse, type RunningServer } from './server';
import { gatehouse } from './transfer';
import { runWrk, type LoadResult, type LoadSettings, type Request } from './wrk';

const SECRET = 'bench-secret-0123456789';
const SMALL = 1_000;
const PER_PAGE = 100;
/** Distinct users the random reads pick from; each path line is one of them, drawn at random. */
const SAMPLE = 20_000;
const PG_SHARED_BUFFERS = '1GB';

type Engine = 'SQLite' | 'PostgreSQL';

const count = (n: number) => n.toLocaleString('en');

/** Random users of the stored set, read back from the database the import wrote. */
async function sample(engine: Engine, where: string): Promise<{ id: string; email: string }[]> {
  const text = `SELECT id, email FROM users ORDER BY random() LIMIT ${SAMPLE}`;
  if (engine === 'SQLite') {
    const db = new Database(join(where, 'gatehouse.db'), { readonly: true });
    try {
      return db.query(text).all() as { id: string; email: string }[];
    } finally {
      db.close();
    }
  }
  const sql = new SQL({ url: where, max: 1 });
  try {
    return [...(await sql.unsafe(text))] as { id: string; email: string }[];
  } finally {
    await sql.close();
  }
}

/** One path a line, drawn at random from `paths`: enough that no thread runs out within the run. */
async function pathsFile(file: string, paths: string[], settings: LoadSettings): Promise<string> {
  const lines = Math.min(2_000_000, 150_000 * (settings.seconds + 1));
  const writer = Bun.file(file).writer();
  for (let i = 0; i < lines; i++) writer.write(`${paths[Math.floor(Math.random() * paths.length)]}\n`);
  await writer.end();
  return file;
}

/** One size on one engine, imported and served, with the requests of every scenario. */
interface Prepared {
  users: number;
  importPerSecond: number;
  server: RunningServer;
  scenarios: [string, Request][];
  stop(): Promise<void>;
}

async function prepare(engine: Engine, users: number, dir: string, pg: PostgresServer | null, settings: LoadSettings, log: (m: string) => void): Promise<Prepared> {
  const label = `${engine}, ${count(users)} users`;
  const file = join(dir, `generated-${users}.ndjson`);
  log(`${label}: writing the lines`);
  await writeGeneratedUsers(file, { count: users, randomEmails: true });
  const dataDir = join(dir, `${engine}-${users}`);
  const database = pg === null ? null : await pg.createDatabase({ name: `gatehouse_size_${users}` });
  const target = database === null ? ['--dir', dataDir] : ['--database-url', database.url];
  log(`${label}: import`);
  const imported = await gatehouse(['import', file, ...target]);
  rmSync(file);
  const picked = await sample(engine, database?.url ?? dataDir);
  const server: RunningServer = await startGatehouse(dataDir, SECRET, database === null ? [] : ['--database-url', database.url]);
  const stop = async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const headers = { authorization: SECRET };
    const lastPage = Math.ceil(users / PER_PAGE);
    const before = await fetch(`${server.baseUrl}/users?per_page=${PER_PAGE}&page=${lastPage - 1}`, { headers });
    const cursor = before.headers.get('x-pagination-next-cursor');
    if (cursor === null) throw new Error(`${label}: no cursor for the last page`);
    // A piece of a random address: as selective as a support tool's search for part of a name.
    const query = picked[0]!.email.slice(0, 3);
    const paths = (name: string, of: (u: { id: string; email: string }) => string) => pathsFile(join(dir, `${engine}-${users}-${name}.txt`), picked.map(of), settings);
    const scenarios: [string, Request][] = [
      [BY_ID, { url: server.baseUrl, headers, pathsFile: await paths('ids', (u) => `/users/${u.id}`) }],
      [BY_EMAIL, { url: server.baseUrl, headers, pathsFile: await paths('emails', (u) => `/users?email=${encodeURIComponent(u.email)}`) }],
      [PAGE_1, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}`, headers }],
      [LAST_BY_CURSOR, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&cursor=${cursor}`, headers }],
      // The slow ones last: PostgreSQL may still be working off their queued queries when wrk stops.
      [`GET /users per_page=${PER_PAGE}, last page by page=`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&page=${lastPage}`, headers }],
      [`GET /users per_page=${PER_PAGE}, email_query of 3 characters`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&email_query=${encodeURIComponent(query)}`, headers }],
    ];
    return { users, importPerSecond: users / imported.seconds, server, scenarios, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

const BY_ID = 'GET /users/{id}, random ids';
const BY_EMAIL = 'GET /users?email=, random addresses';
const PAGE_1 = `GET /users per_page=${PER_PAGE}, page 1`;
const LAST_BY_CURSOR = `GET /users per_page=${PER_PAGE}, last page by cursor`;
/** The reads whose ratios sit near their targets: measured in rounds that alternate the sizes, as the machine's speed drifts. */
const IN_ROUNDS = new Set([BY_ID, BY_EMAIL, PAGE_1, LAST_BY_CURSOR]);

/** A scenario's rounds at both sizes, as wrk measured them. */
interface Rounds {
  small: LoadResult[];
  large: LoadResult[];
}
const meanRate = (runs: LoadResult[]) => mean(runs.map((run) => run.requestsPerSecond));
const errorsOf = (runs: LoadResult[]) => runs.reduce((sum, run) => sum + run.errors, 0);

/** Every scenario on both servers, small then large, ROUNDS times for those IN_ROUNDS (once for the others). */
async function measureSizes(small: Prepared, large: Prepared, settings: LoadSettings, log: (m: string) => void) {
  const rounds = Number(process.env.BENCH_DATA_SIZE_ROUNDS ?? 6);
  const measured = new Map<string, Rounds>();
  for (const [index, [name]] of small.scenarios.entries()) {
    const runs: Rounds = { small: [], large: [] };
    for (let round = 1; round <= (IN_ROUNDS.has(name) ? rounds : 1); round++) {
      for (const [size, prepared] of [['small', small], ['large', large]] as const) {
        const request = prepared.scenarios[index]![1];
        log(`${count(prepared.users)} users: ${name} (round ${round})`);
        if (round === 1) await runWrk(request, { ...settings, seconds: 1 });
        await waitForIdle(prepared.server.pid);
        runs[size].push(await runWrk(request, settings));
        await waitForIdle(prepared.server.pid);
      }
    }
    measured.set(name, runs);
  }
  return measured;
}

/** Each round's rate at the large size ÷ the same round's at the small size. */
const roundRatios = (runs: Rounds) => runs.large.map((run, i) => run.requestsPerSecond / runs.small[i]!.requestsPerSecond);

export interface DataSizeReport {
  lines: string[];
  targets: Target[];
}

/** Both sizes on one engine, and the ratios of the large one to the small one. */
async function onEngine(engine: Engine, users: number, dir: string, pg: PostgresServer | null, settings: LoadSettings, log: (m: string) => void) {
  const small = await prepare(engine, SMALL, dir, pg, settings, log);
  let large: Prepared | undefined;
  let rows: Map<string, Rounds>;
  let rssAfterMb: number;
  try {
    large = await prepare(engine, users, dir, pg, settings, log);
    rows = await measureSizes(small, large, settings, log);
    rssAfterMb = readMemory(large.server.pid)?.rssMb ?? NaN;
  } finally {
    await Promise.all([small.stop(), large?.stop()]);
  }
  const cache = engine === 'SQLite' ? `page caches of ${SERVER_PAGE_CACHE_KIB / 1024} MiB for the views and ${SERVER_MAIN_PAGE_CACHE_KIB / 1024} MiB for the rest` : `shared_buffers ${PG_SHARED_BUFFERS}`;
  const lines = [
    `\n${engine}: ${count(SMALL)} users against ${count(users)} (random ids and emails, imported; ${cache})`,
    '',
    `| Read | ${count(SMALL)} users, /s | ${count(users)} users, /s | ratio | ratio in each round |`,
    '|---|---:|---:|---:|---|',
  ];
  for (const [name, runs] of rows) {
    const [base, big] = [meanRate(runs.small), meanRate(runs.large)];
    const each = roundRatios(runs).map((ratio) => ratio.toFixed(2));
    lines.push(`| ${name} | ${base.toFixed(0)} | ${big.toFixed(big < 1000 ? 1 : 0)} | ${(big / base).toFixed(2)} | ${each.join(', ')} |`);
  }
  const errors = [...rows].flatMap(([name, runs]) =>
    ([[SMALL, runs.small], [users, runs.large]] as const).filter(([, of]) => errorsOf(of) > 0).map(([size, of]) => `${name} (${count(size)} users): ${errorsOf(of)} errors`),
  );
  lines.push('', `Import of ${count(users)}: ${count(Math.round(large.importPerSecond))} users/s; RSS of the server after the reads: ${rssAfterMb.toFixed(1)} MB.`, ...errors);
  const atLarge = (name: string) => meanRate(rows.get(name)!.large);
  const ratio = (name: string) => atLarge(name) / meanRate(rows.get(name)!.small);
  const targets = [
    target(`${engine}: GET by id at ${count(users)} ÷ at ${count(SMALL)}`, ratio(BY_ID), '≥', 0.8, roundRatios(rows.get(BY_ID)!)),
    target(`${engine}: GET by email ÷ GET by id, at ${count(users)}`, atLarge(BY_EMAIL) / atLarge(BY_ID), '≥', 0.8),
    target(`${engine}: last page by cursor ÷ page 1, at ${count(users)}`, atLarge(LAST_BY_CURSOR) / atLarge(PAGE_1), '≥', 0.5),
    target(`${engine}: server RSS after the reads at ${count(users)}, MB`, rssAfterMb, '≤', 250),
  ];
  if (engine === 'SQLite') targets.push(target(`SQLite: import of random ids and emails, users/s`, large.importPerSecond, '≥', 50_000));
  else lines.push(`(PostgreSQL's import has no target: ${count(Math.round(large.importPerSecond))} users/s here.)`);
  return { lines, targets };
}

export async function dataSizeBench(dir: string, settings: LoadSettings, log: (m: string) => void): Promise<DataSizeReport> {
  const users = Number(process.env.BENCH_USERS ?? 1_000_000);
  const sqlite = await onEngine('SQLite', users, dir, null, settings, log);
  // BENCH_DATA_SIZE_SQLITE_ONLY=1 leaves PostgreSQL out, for a quick look at SQLite.
  if (process.env.BENCH_DATA_SIZE_SQLITE_ONLY !== undefined) return sqlite;
  const availability = await postgresAvailability();
  if (!availability.ok) return { lines: [...sqlite.lines, `\nPostgreSQL: skipped (${availability.reason})`], targets: sqlite.targets };
  // PostgreSQL's cache sized for the data, as its docs advise for a dedicated server (a quarter of the
  // memory to start with): the tests' 64MB held no working set of a million users (0.63 by id).
  const pg = await startPostgres({ sharedBuffers: PG_SHARED_BUFFERS });
  try {
    const postgres = await onEngine('PostgreSQL', users, dir, pg, settings, log);
    return { lines: [...sqlite.lines, ...postgres.lines], targets: [...sqlite.targets, ...postgres.targets] };
  } finally {
    await pg.stop();
  }
}
