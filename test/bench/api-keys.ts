// Issue 38 in `bun run bench` (alone: BENCH_ONLY=api-keys): POST /verify-api-key against GET /users/{id},
// with 100,000 keys stored, on SQLite and on PostgreSQL (API.md §18: at least 0.8× on each engine), as
// the means of interleaved rounds.
import { SQL } from 'bun';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/client';
import { migratePostgres } from '../../src/db/pg-client';
import { generateApiKey } from '../../src/security/api-key-secret';
import { postgresAvailability, startPostgres } from '../support/postgres';
import { ARGON2 } from './hashing';
import { cpuTicks, waitForIdle, withPeakRss } from './proc';
import { mean, type Row, target, type Target } from './report';
import { seedUsers } from './seed';
import { seedPostgres } from './several';
import { startBareServer, startGatehouse, type RunningServer } from './server';
import { runWrk, type LoadSettings, type Request } from './wrk';

const SECRET = 'bench-secret-0123456789';
const KEYS = 100_000;
const KEYS_PER_USER = 100;
/** Interleaved rounds of each pair (BENCH_API_KEYS_ROUNDS). */
const ROUNDS = Number(process.env.BENCH_API_KEYS_ROUNDS ?? 3);

/** 100,000 key rows, 100 to each user, as a key creation writes them; answers one key that verifies. */
function keyRows(userIds: string[]) {
  let sample = '';
  const rows = Array.from({ length: KEYS }, (_, n) => {
    const { id, key, secretHash, start } = generateApiKey();
    if (n === KEYS / 2) sample = key;
    return { id, user_id: userIds[Math.floor(n / KEYS_PER_USER) % userIds.length]!, name: `key ${n}`, scopes: 'repo:read', secret_hash: secretHash, start, created_at: 1_767_225_600 + n };
  });
  return { rows, sample };
}

export async function apiKeysBench(dir: string, settings: LoadSettings, log: (message: string) => void): Promise<{ rows: Row[]; targets: Target[] }> {
  const measure = async (server: RunningServer, name: string, request: Omit<Request, 'url' | 'headers'> & { path: string }): Promise<Row> => {
    log(name);
    const full = { ...request, url: server.baseUrl + request.path, headers: { authorization: SECRET, 'content-type': 'application/json' } };
    await runWrk(full, { ...settings, seconds: 1 });
    await waitForIdle(server.pid);
    const before = cpuTicks(server.pid);
    const { result, peakRssMb } = await withPeakRss(server.pid, () => runWrk(full, settings));
    return { scenario: name, load: result, peakRssMb, cpuUs: ((cpuTicks(server.pid) - before) * 10_000) / Math.max(1, result.requests) };
  };
  /** ROUNDS rounds of the read then the verify, so a drift of the machine reaches both alike: a row each, then the mean of each. */
  const pair = async (server: RunningServer, engine: string, userId: string, key: string, paths = { read: `/users/${userId}`, verify: '/verify-api-key' }) => {
    const read = `GET ${engine === 'bare Bun.serve' ? '' : '/users/{id}, '}${engine}`;
    const verify = engine === 'bare Bun.serve' ? `POST reading the same body, ${engine}` : `POST /verify-api-key, ${engine}, ${KEYS.toLocaleString('en')} keys`;
    const rounds: Row[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      rounds.push({ ...(await measure(server, read, { path: paths.read })), note: `round ${round}` });
      rounds.push({ ...(await measure(server, verify, { path: paths.verify, method: 'POST', body: JSON.stringify({ key, scopes: ['repo:read'] }) })), note: `round ${round}` });
    }
    const meanRow = (scenario: string): Row => {
      const mine = rounds.filter((row) => row.scenario === scenario);
      return { scenario: `${scenario}, mean of ${ROUNDS}`, perSecond: mean(mine.map((row) => row.load!.requestsPerSecond)) };
    };
    return { rounds, means: [meanRow(read), meanRow(verify)] };
  };
  const passwordHash = await Bun.password.hash('bench password 0123', ARGON2);
  const rows: Row[] = [];
  const means: Row[] = [];

  // The ceiling of the ratio: a bare Bun.serve answering a fixed JSON to a GET and, after reading its body, to a POST.
  const bare = await startBareServer();
  let ceiling: number | undefined;
  try {
    const measured = await pair(bare, 'bare Bun.serve', '', generateApiKey().key, { read: '/', verify: '/' });
    rows.push(...measured.rounds, ...measured.means);
    ceiling = measured.means[1]!.perSecond! / measured.means[0]!.perSecond!;
  } finally {
    await bare.stop();
  }

  const sqliteDir = join(dir, 'api-keys-sqlite');
  const { ids } = seedUsers(sqliteDir, KEYS / KEYS_PER_USER, passwordHash, { allIds: true });
  const sqliteKeys = keyRows(ids);
  const db = openDatabase(sqliteDir);
  const insert = db.$client.prepare('insert into api_keys (id, user_id, name, scopes, secret_hash, start, created_at) values (?, ?, ?, ?, ?, ?, ?)');
  db.$client.transaction(() => sqliteKeys.rows.forEach((r) => insert.run(r.id, r.user_id, r.name, r.scopes, r.secret_hash, r.start, r.created_at)))();
  db.$client.close();
  const sqlite = await startGatehouse(sqliteDir, SECRET);
  try {
    const measured = await pair(sqlite, 'SQLite', ids[0]!, sqliteKeys.sample);
    rows.push(...measured.rounds, ...measured.means);
    means.push(...measured.means);
  } finally {
    await sqlite.stop();
  }

  // BENCH_API_KEYS_SQLITE_ONLY=1 leaves PostgreSQL out, for a quick look at the SQLite pair.
  if (process.env.BENCH_API_KEYS_SQLITE_ONLY === undefined && (await postgresAvailability()).ok) {
    const pg = await startPostgres();
    try {
      const database = await pg.createDatabase({ name: 'gatehouse_bench_api_keys' });
      await migratePostgres(database.url);
      const admin = new SQL({ url: database.url, max: 1 });
      const userIds = await seedPostgres(admin, passwordHash);
      const pgKeys = keyRows(userIds);
      for (let i = 0; i < KEYS; i += 5_000) await admin`insert into api_keys ${admin(pgKeys.rows.slice(i, i + 5_000))}`;
      await admin`analyze api_keys`;
      await admin.close();
      const server = await startGatehouse(join(dir, 'api-keys-pg'), SECRET, ['--database-url', database.url]);
      try {
        const measured = await pair(server, 'PostgreSQL', userIds[0]!, pgKeys.sample);
        rows.push(...measured.rounds, ...measured.means);
        means.push(...measured.means);
      } finally {
        await server.stop();
      }
    } finally {
      await pg.close();
    }
  }
  const targets: Target[] = [];
  for (let i = 0; i + 1 < means.length; i += 2) {
    const ratio = means[i + 1]!.perSecond! / means[i]!.perSecond!;
    const note = ceiling === undefined ? '' : ` (a bare Bun.serve's POST reading the same body ÷ its GET, in this run: ${ceiling.toFixed(2)})`;
    targets.push(target(`${means[i + 1]!.scenario} ÷ ${means[i]!.scenario}${note}`, ratio, '≥', 0.8));
  }
  return { rows, targets };
}
