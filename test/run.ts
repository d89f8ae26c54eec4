/**
 * `bun run test`: the whole suite on the default SQLite set-up, then the HTTP suites again on
 * PostgreSQL + Redis as one instance and as two instances taking turns (issue 13, API.md §10).
 * Which suites are HTTP suites is not a list kept here (issue 34): every test file that builds an
 * in-process Gatehouse following the set-up (test/support/harness.ts's createHarness) writes its path
 * to a file this runner names on the SQLite run, and exactly those files run on the other set-ups.
 * Installs PostgreSQL and Redis from Debian when missing and running as root; where that is not
 * possible the two runs are reported as skipped with the reason, never as passed, and under CI
 * (test/support/ci.ts) they fail the run at once, before the SQLite run, as does any skipped test. Ends with one line:
 * `N passed, N failed, N skipped`. Extra arguments go to every `bun test` (a file filter, `-t`, ...).
 * The first run also holds the suites that start engines of their own, among them the contention
 * suites (test/contention*.test.ts): two real server processes on one PostgreSQL + Redis
 * (test/support/two-processes.ts); without the engines they fail under CI and are skipped elsewhere.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UNDER_CI } from './support/ci';
import { postgresAvailability } from './support/postgres';
import { redisAvailability } from './support/redis';
import type { Setup } from './support/setups';

/** Per test, as test/support/preload.ts sets it: argon2id hashing and real server processes are slow. */
const TEST_TIMEOUT_MS = 30_000;

interface Tally {
  pass: number;
  fail: number;
  skip: number;
}

/** Every `(fail)` line of every run, repeated above the last line: CI may show only the end of the output. */
const failures = new Set<string>();

/**
 * How many tests each file reported (`(pass)`, `(fail)`, `(skip)`, `(todo)` lines under its
 * `test/x.test.ts:` header), so a set-up that cannot run is counted in skipped tests, not files.
 */
function testsPerFile(output: string): Map<string, number> {
  const perFile = new Map<string, number>();
  let file: string | undefined;
  for (const line of output.split('\n')) {
    const header = /^(test\/\S+\.test\.ts):$/.exec(line);
    if (header !== null) file = header[1]!;
    else if (file !== undefined && /^\((pass|fail|skip|todo)\) /.test(line)) perFile.set(file, (perFile.get(file) ?? 0) + 1);
  }
  return perFile;
}

/** Runs `bun test` with the set-up, passing its output through, and reads bun's summary. */
async function runBunTest(setup: Setup, files: string[], extra: string[], env: Record<string, string> = {}): Promise<Tally & { exitCode: number; perFile: Map<string, number> }> {
  console.log(`\n=== ${setup}: bun test ${files.length === 0 ? '(every file)' : `${files.length} HTTP suites`}`);
  // --timeout: the preload's setDefaultTimeout reaches only the first file bun runs (bun 1.4.5).
  const proc = Bun.spawn([process.execPath, 'test', '--timeout', String(TEST_TIMEOUT_MS), ...files, ...extra], {
    env: { ...process.env, ...env, GATEHOUSE_TEST_SETUP: setup },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let output = '';
  const pump = async (stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output += text;
      to.write(text);
    }
  };
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
  const exitCode = await proc.exited;
  // bun's summary lines: ` 12 pass`, ` 0 fail`, ` 1 skip` (the last of each, if it printed one).
  const count = (word: string) => Number([...output.matchAll(new RegExp(`^\\s*(\\d+) ${word}$`, 'gm'))].at(-1)?.[1] ?? 0);
  const tally = { pass: count('pass'), fail: count('fail'), skip: count('skip') };
  for (const [line] of output.matchAll(/^\(fail\) .*$/gm)) failures.add(`${setup}: ${line}`);
  // A crash before bun's summary, or a non-zero exit without a counted failure, is a failure.
  if (exitCode !== 0 && tally.fail === 0) {
    tally.fail = 1;
    failures.add(`${setup}: bun test exited with code ${exitCode} without naming a failed test`);
  }
  // Under CI nothing may be skipped: a skipped test is a check that did not run.
  if (UNDER_CI && tally.skip > 0) {
    tally.fail += tally.skip;
    failures.add(`${setup}: ${tally.skip} tests skipped, and under CI a test that cannot run fails the run`);
  }
  return { ...tally, exitCode, perFile: testsPerFile(output) };
}

const extra = process.argv.slice(2);
const total: Tally = { pass: 0, fail: 0, skip: 0 };
const add = (t: Tally) => {
  total.pass += t.pass;
  total.fail += t.fail;
  total.skip += t.skip;
};

// Under CI a missing engine fails the run before anything else: the run could not pass, and the
// SQLite run would spend ten minutes before saying so.
if (UNDER_CI) {
  const missingUnderCi = [await postgresAvailability(), await redisAvailability()].find((availability) => !availability.ok);
  if (missingUnderCi !== undefined && !missingUnderCi.ok) {
    console.log(`\nfailed: PostgreSQL + Redis are needed under CI (the contention suites and two set-ups) and cannot run: ${missingUnderCi.reason}`);
    console.log('\n0 passed, 1 failed, 0 skipped');
    process.exit(1);
  }
}

// The SQLite run names the HTTP suites: each file that builds a set-up-following harness writes its path here.
const recordDir = mkdtempSync(join(tmpdir(), 'gatehouse-run-'));
const record = join(recordDir, 'harness-suites.txt');
const sqliteRun = await runBunTest('sqlite', [], extra, { GATEHOUSE_TEST_HARNESS_SUITES: record });
add(sqliteRun);
let recorded = '';
try {
  recorded = readFileSync(record, 'utf8');
} catch {
  // No file built a harness (a filter that picked none).
}
rmSync(recordDir, { recursive: true, force: true });
const httpSuites = [...new Set(recorded.split('\n').filter((line) => line !== ''))].sort();
console.log(`\nHTTP suites (build a harness), for the PostgreSQL set-ups: ${httpSuites.length === 0 ? 'none in this run' : httpSuites.join(' ')}`);

const engines = [await postgresAvailability(), await redisAvailability()];
const missing = engines.find((availability) => !availability.ok);
if (httpSuites.length === 0) {
  // Nothing to run there.
} else if (missing !== undefined && !missing.ok) {
  // The tests those runs would have run: as many as each suite ran on SQLite (at least one a suite).
  const tests = httpSuites.reduce((sum, file) => sum + Math.max(1, sqliteRun.perFile.get(file) ?? 0), 0);
  if (UNDER_CI) {
    console.log(`\nfailed: the PostgreSQL + Redis set-ups cannot run under CI (${httpSuites.length} HTTP suites, ${tests} tests, twice): ${missing.reason}`);
    failures.add(`postgres, postgres-2: cannot run: ${missing.reason}`);
    total.fail += tests * 2;
  } else {
    console.log(`\nskipped: the PostgreSQL + Redis set-ups (${httpSuites.length} HTTP suites, ${tests} tests, twice): ${missing.reason}`);
    total.skip += tests * 2;
  }
} else {
  for (const setup of ['postgres', 'postgres-2'] as const) add(await runBunTest(setup, httpSuites, extra));
}

if (failures.size > 0) console.log(`\nfailed:\n${[...failures].join('\n')}`);
console.log(`\n${total.pass} passed, ${total.fail} failed, ${total.skip} skipped`);
process.exit(total.fail === 0 ? 0 : 1);
