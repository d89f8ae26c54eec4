import { SQL } from 'bun';
import { afterAll, beforeAll, expect } from 'bun:test';
import { SECRET } from './constants';
import { reportSkipped } from './debian-packages';
import { postgresAvailability } from './postgres';
import { redisAvailability } from './redis';
import { startEngines } from './setups';
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
  /**
   * Sends `count` requests at once, alternating between the processes; the answers in the order sent,
   * with how many requests each process logged meanwhile (`served`, from its own access lines).
   */
  parallel(count: number, request: (n: number) => { method: string; path: string; body?: unknown }): Promise<Answers>;
  /** Where each process's log stands now, for servedSince. */
  mark(): Mark;
  /**
   * How many requests each process logged an access line for since `mark`: the servers' own word on
   * who answered, waiting (up to 10 s) for the lines of `answers` to arrive.
   */
  servedSince(mark: Mark, answers: Answer[]): Promise<Served>;
  /** Stops both processes (SIGTERM) and the engines. */
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  json: any;
  text: string;
  /** Which process the request was sent to (0 or 1); the servers' access lines say who answered. */
  process: number;
}

/** Access lines logged by process 0 and by process 1. */
export type Served = [number, number];
export type Mark = [number, number];
export type Answers = Answer[] & { served: Served };

/** The process's access lines so far (every answered request writes one, with its request id). */
const accessLines = (server: ServerProcess) => server.lines.filter((line) => typeof line.request_id === 'string' && typeof line.status === 'number');

/** How many of `answers` were sent to each process: the share each must have served. */
const sharesOf = (answers: Answer[]): Served => [answers.filter((a) => a.process === 0).length, answers.filter((a) => a.process === 1).length];

export interface TwoProcessOptions {
  /** More flags for both `serve` commands (e.g. --webauthn-rp-id). */
  extraArgs?: string[];
  /** The credential flags of process 0 or 1, instead of `--secret SECRET` (e.g. each its own --keys-file). */
  credentials?: (index: number) => string[];
}

export async function startTwoProcesses(options: TwoProcessOptions = {}): Promise<TwoProcesses> {
  const { pg, redis } = await startEngines();
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
    const mark = (): Mark => [accessLines(servers[0]!).length, accessLines(servers[1]!).length];
    const servedSince = async (since: Mark, answers: Answer[]): Promise<Served> => {
      const shares = sharesOf(answers);
      const served = (): Served => [accessLines(servers[0]!).length - since[0], accessLines(servers[1]!).length - since[1]];
      const deadline = Date.now() + 10_000;
      while ((served()[0] < shares[0] || served()[1] < shares[1]) && Date.now() < deadline) await Bun.sleep(20);
      return served();
    };
    return {
      servers: servers as unknown as [ServerProcess, ServerProcess],
      databaseUrl: database.url,
      redisUrl: redis.url,
      sql,
      call,
      parallel: async (count, request) => {
        const since = mark();
        const answers = await Promise.all(
          Array.from({ length: count }, (_, n) => {
            const { method, path, body } = request(n);
            return call(n, method, path, body);
          }),
        );
        return Object.assign(answers, { served: await servedSince(since, answers) });
      },
      mark,
      servedSince,
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

/**
 * Every answer of a round counted as expected (a failure names the round), and each process served
 * its share: by its own access lines (`served`: from parallel(), or servedSince() for answers gathered
 * otherwise), at least as many requests as were sent to it, and it was sent some.
 */
export function expectTally(round: number, answers: Answer[] | Answers, expected: Record<string, number>, served?: Served): void {
  expect({ round, answers: tally(answers) }).toEqual({ round, answers: expected });
  expectServedShares(round, answers, served ?? (answers as Answers).served);
}

/** Each process logged at least the requests sent to it, and both were sent some. */
export function expectServedShares(round: number, answers: Answer[], served: Served | undefined): void {
  if (served === undefined) throw new Error('expectTally needs the processes\' own count: answers from parallel(), or servedSince()');
  const shares = sharesOf(answers);
  expect({ round, bothSent: shares[0] > 0 && shares[1] > 0 }).toEqual({ round, bothSent: true });
  expect({ round, served: [served[0] >= shares[0], served[1] >= shares[1]], shares, counted: served }).toEqual({ round, served: [true, true], shares, counted: served });
}

/** The answer's JSON, or a failure naming the step when it is not 200. */
export async function ok(answer: Answer, what: string): Promise<any> {
  if (answer.status !== 200) throw new Error(`${what}: ${answer.status} ${answer.text}`);
  return answer.json;
}
