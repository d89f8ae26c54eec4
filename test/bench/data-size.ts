// Issue 37 in `bun run bench` (alone: BENCH_ONLY=data-size): the same reads at 1,000 users and at
// BENCH_USERS (default 1,000,000) imported with random ids and emails, on SQLite and PostgreSQL, each
// read as a ratio of its rate at 1,000 users, in one run.
import { Database } from 'bun:sqlite';
import { SQL } from 'bun';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeGeneratedUsers } from '../support/generated-users';
import { postgresAvailability, startPostgres, type PostgresServer } from '../support/postgres';
import { readMemory, waitForIdle, withPeakRss } from './proc';
import type { Row, Target } from './report';
import { startGatehouse, type RunningServer } from './server';
import { gatehouse } from './transfer';
import { runWrk, type LoadSettings, type Request } from './wrk';

const SECRET = 'bench-secret-0123456789';
const SMALL = 1_000;
const PER_PAGE = 100;
/** Distinct users the random reads pick from; each path line is one of them, drawn at random. */
const SAMPLE = 20_000;
const PG_SHARED_BUFFERS = '1GB';

type Engine = 'SQLite' | 'PostgreSQL';
interface SizeResult {
  users: number;
  importPerSecond: number;
  rows: Map<string, Row>;
  rssAfterMb: number;
}

const count = (n: number) => n.toLocaleString('en');
const rate = (row: Row | undefined) => row?.load?.requestsPerSecond ?? NaN;

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

async function oneSize(engine: Engine, users: number, dir: string, pg: PostgresServer | null, settings: LoadSettings, log: (m: string) => void): Promise<SizeResult> {
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
  const rows = new Map<string, Row>();
  try {
    const headers = { authorization: SECRET };
    const lastPage = Math.ceil(users / PER_PAGE);
    const before = await fetch(`${server.baseUrl}/users?per_page=${PER_PAGE}&page=${lastPage - 1}`, { headers });
    const cursor = before.headers.get('x-pagination-next-cursor');
    if (cursor === null) throw new Error(`${label}: no cursor for the last page`);
    // A piece of a random address: as selective as a support tool's search for part of a name.
    const query = picked[0]!.email.slice(0, 3);
    const scenarios: [string, Request][] = [
      ['GET /users/{id}, random ids', { url: server.baseUrl, headers, pathsFile: await pathsFile(join(dir, 'ids.txt'), picked.map((u) => `/users/${u.id}`), settings) }],
      ['GET /users?email=, random addresses', { url: server.baseUrl, headers, pathsFile: await pathsFile(join(dir, 'emails.txt'), picked.map((u) => `/users?email=${encodeURIComponent(u.email)}`), settings) }],
      [`GET /users per_page=${PER_PAGE}, page 1`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}`, headers }],
      [`GET /users per_page=${PER_PAGE}, last page by cursor`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&cursor=${cursor}`, headers }],
      // The slow ones last: PostgreSQL may still be working off their queued queries when wrk stops.
      [`GET /users per_page=${PER_PAGE}, last page by page=`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&page=${lastPage}`, headers }],
      [`GET /users per_page=${PER_PAGE}, email_query of 3 characters`, { url: `${server.baseUrl}/users?per_page=${PER_PAGE}&email_query=${encodeURIComponent(query)}`, headers }],
    ];
    for (const [name, request] of scenarios) {
      log(`${label}: ${name}`);
      await runWrk(request, { ...settings, seconds: 1 });
      await waitForIdle(server.pid);
      const { result, peakRssMb } = await withPeakRss(server.pid, () => runWrk(request, settings));
      rows.set(name, { scenario: `${name} (${label})`, load: result, peakRssMb });
      await waitForIdle(server.pid);
    }
    return { users, importPerSecond: users / imported.seconds, rows, rssAfterMb: readMemory(server.pid)?.rssMb ?? NaN };
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function target(name: string, ratio: number, op: '≥' | '≤', limit: number): Target {
  return { name, ratio, rule: `${op} ${limit}`, met: op === '≥' ? ratio >= limit : ratio <= limit };
}

export interface DataSizeReport {
  lines: string[];
  targets: Target[];
}

/** Both sizes on one engine, and the ratios of the large one to the small one. */
async function onEngine(engine: Engine, users: number, dir: string, pg: PostgresServer | null, settings: LoadSettings, log: (m: string) => void) {
  const small = await oneSize(engine, SMALL, dir, pg, settings, log);
  const large = await oneSize(engine, users, dir, pg, settings, log);
  const cache = engine === 'SQLite' ? 'the server\'s 64 MiB page cache' : `shared_buffers ${PG_SHARED_BUFFERS}`;
  const lines = [`\n${engine}: ${count(SMALL)} users against ${count(users)} (random ids and emails, imported; ${cache})`, '', `| Read | ${count(SMALL)} users, /s | ${count(users)} users, /s | ratio |`, '|---|---:|---:|---:|'];
  for (const [name, row] of large.rows) {
    const base = rate(small.rows.get(name));
    lines.push(`| ${name} | ${base.toFixed(0)} | ${rate(row).toFixed(row.load!.requestsPerSecond < 1000 ? 1 : 0)} | ${(rate(row) / base).toFixed(2)} |`);
  }
  const errors = [...small.rows.values(), ...large.rows.values()].filter((row) => (row.load?.errors ?? 0) > 0).map((row) => `${row.scenario}: ${row.load!.errors} errors`);
  lines.push('', `Import of ${count(users)}: ${count(Math.round(large.importPerSecond))} users/s; RSS of the server after the reads: ${large.rssAfterMb.toFixed(1)} MB.`, ...errors);
  const byId = (r: SizeResult) => rate(r.rows.get('GET /users/{id}, random ids'));
  const page1 = rate(large.rows.get(`GET /users per_page=${PER_PAGE}, page 1`));
  const targets = [
    target(`${engine}: GET by id at ${count(users)} ÷ at ${count(SMALL)}`, byId(large) / byId(small), '≥', 0.8),
    target(`${engine}: GET by email ÷ GET by id, at ${count(users)}`, rate(large.rows.get('GET /users?email=, random addresses')) / byId(large), '≥', 0.8),
    target(`${engine}: last page by cursor ÷ page 1, at ${count(users)}`, rate(large.rows.get(`GET /users per_page=${PER_PAGE}, last page by cursor`)) / page1, '≥', 0.5),
    target(`${engine}: server RSS after the reads at ${count(users)}, MB`, large.rssAfterMb, '≤', 250),
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
