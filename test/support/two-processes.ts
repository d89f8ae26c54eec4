import { SQL } from 'bun';
import { afterAll, beforeAll, expect } from 'bun:test';
import { SECRET } from './constants';
import { reportSkipped } from './debian-packages';
import { postgresAvailability, startPostgres, type PostgresServer } from './postgres';
import { redisAvailability, startRedis, type RedisServer } from './redis';
import { makeTempDir, removeDir, startServer, type ServerProcess } from './server-process';

/**
 * Two Gatehouse server processes on one throwaway PostgreSQL and Redis (API.md §10), started the way
 * a user runs them: `bun run src/main.ts serve --database-url … --redis-url … --secret …` on a free
 * port each. Separate OS processes, so each has its own event loop, pool, hasher and Redis link, and
 * no cross-instance guarantee can lean on sharing one of them.
 */
export interface TwoProcesses {
  readonly servers: readonly [ServerProcess, ServerProcess];
  readonly databaseUrl: string;
  readonly redisUrl: string;
  /** A connection to the shared database, for seeding rows and reading them back. */
  readonly sql: SQL;
  /** The request with index `n` goes to process `n % 2`: callers alternate by counting. */
  call(n: number, method: string, path: string, body?: unknown): Promise<Answer>;
  /** Sends `count` requests at once, alternating between the processes; the answers in the order sent. */
  parallel(count: number, request: (n: number) => { method: string; path: string; body?: unknown }): Promise<Answer[]>;
  /** Stops both processes (SIGTERM) and the engines. */
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  json: any;
  text: string;
  /** Which process answered: 0 or 1. */
  process: number;
}

export interface TwoProcessOptions {
  /** More flags for both `serve` commands (e.g. --webauthn-rp-id). */
  extraArgs?: string[];
  /** The credential flags of process 0 or 1, instead of `--secret SECRET` (e.g. each its own --keys-file). */
  credentials?: (index: number) => string[];
}

export async function startTwoProcesses(options: TwoProcessOptions = {}): Promise<TwoProcesses> {
  const [pg, redis]: [PostgresServer, RedisServer] = await Promise.all([startPostgres(), startRedis()]);
  const dirs = [makeTempDir(), makeTempDir()];
  const servers: ServerProcess[] = [];
  let sql: SQL | undefined;
  const close = async () => {
    await Promise.all(servers.map((server) => server.stop('SIGTERM')));
    await sql?.close({ timeout: 0 });
    await Promise.all([pg.close(), redis.close()]);
    for (const dir of dirs) removeDir(dir);
  };
  try {
    const database = await pg.freshDatabase();
    sql = new SQL({ url: database.url, max: 4 });
    const args = (dir: string, index: number) => [
      'serve', '--port', '0', '--dir', dir, '--pwned-check', 'off',
      '--database-url', database.url, '--redis-url', redis.url, ...(options.credentials?.(index) ?? ['--secret', SECRET]),
      ...(options.extraArgs ?? []),
    ];
    // One after the other, as two operators would: the second finds the migrations applied.
    for (const [index, dir] of dirs.entries()) servers.push(await startServer({ args: args(dir, index), timeoutMs: 60_000 }));
    const call = async (n: number, method: string, path: string, body?: unknown): Promise<Answer> => {
      const process = n % 2;
      const response = await servers[process]!.request(method, path, body);
      const text = await response.text();
      let json: any;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: response.status, json, text, process };
    };
    return {
      servers: servers as unknown as [ServerProcess, ServerProcess],
      databaseUrl: database.url,
      redisUrl: redis.url,
      sql,
      call,
      parallel: (count, request) =>
        Promise.all(
          Array.from({ length: count }, (_, n) => {
            const { method, path, body } = request(n);
            return call(n, method, path, body);
          }),
        ),
      close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

/**
 * Call at the top of a test file: two processes for the file's tests, or `skip` (with the reason
 * printed, and every test of the file counted as skipped) when PostgreSQL or Redis cannot run here.
 */
export async function twoProcessesForThisFile(suite: string, options: TwoProcessOptions = {}): Promise<{ skip: boolean; pair: () => TwoProcesses }> {
  const engines = [await postgresAvailability(), await redisAvailability()];
  const missing = engines.find((availability) => !availability.ok) ?? { ok: true as const };
  const skip = reportSkipped(suite, missing);
  let pair: TwoProcesses | undefined;
  let starting: Promise<TwoProcesses> | undefined;
  beforeAll(async () => {
    if (skip) return;
    starting = startTwoProcesses(options);
    pair = await starting;
  }, 120_000);
  afterAll(async () => {
    const started = await starting?.catch(() => undefined);
    await started?.close();
  }, 60_000);
  return {
    skip,
    pair: () => {
      if (pair === undefined) throw new Error('the two server processes are not running');
      return pair;
    },
  };
}

/** `status` or `status CODE` for each answer, counted. */
export function tally(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key = answer.json?.error === undefined ? String(answer.status) : `${answer.status} ${answer.json.error}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Every answer of a round counted as expected (a failure names the round), and both processes answered their share. */
export function expectTally(round: number, answers: Answer[], expected: Record<string, number>): void {
  expect({ round, answers: tally(answers) }).toEqual({ round, answers: expected });
  expect(new Set(answers.map((a) => a.process)).size).toBe(2);
}

/** The answer's JSON, or a failure naming the step when it is not 200. */
export async function ok(answer: Answer, what: string): Promise<any> {
  if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${answer.text}`);
  return answer.json;
}
