/**
 * `bun run test`: the whole suite on the default SQLite set-up, then the HTTP suites again on
 * PostgreSQL + Redis as one instance and as two instances taking turns (issue 13, API.md §10).
 * Installs PostgreSQL and Redis from Debian when missing and running as root; where that is not
 * possible the two runs are reported as skipped with the reason, never as passed. Ends with one line:
 * `N passed, N failed, N skipped`. Extra arguments go to every `bun test` (a file filter, `-t`, ...).
 * The first run also holds the suites that start engines of their own, among them the contention
 * suite (test/contention.test.ts): two real server processes on one PostgreSQL + Redis
 * (test/support/two-processes.ts); without the engines its tests count as skipped, with the reason printed.
 */
import { postgresAvailability } from './support/postgres';
import { redisAvailability } from './support/redis';
import type { Setup } from './support/setups';

/** The suites that drive the service through HTTP and so must hold on every storage. */
const HTTP_SUITES = [
  'test/users.test.ts',
  'test/direct-read.test.ts',
  'test/user-gone-writes.test.ts',
  'test/passwords.test.ts',
  'test/password-reset.test.ts',
  'test/email-verification.test.ts',
  'test/email-update.test.ts',
  'test/email-sign-in.test.ts',
  'test/first-proof.test.ts',
  'test/totp.test.ts',
  'test/conventions.test.ts',
  'test/passkeys.test.ts',
  'test/passkeys-refusals.test.ts',
  'test/passkeys-limits.test.ts',
  'test/events.test.ts',
  'test/webhooks.test.ts',
  'test/imported-hashes.test.ts',
  'test/transfer-round-trip.test.ts',
  'test/client.test.ts',
  // Harness suites about the HTTP surface as a whole: limits, sweeps, metrics, headers, hostile input.
  'test/floods.test.ts',
  'test/sweep.test.ts',
  'test/metrics.test.ts',
  'test/response-headers.test.ts',
  'test/hostile-input.test.ts',
  'test/email-addresses.test.ts',
  'test/breach-outage.test.ts',
  'test/docs.test.ts',
];

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
async function runBunTest(setup: Setup, files: string[], extra: string[]): Promise<Tally & { exitCode: number; perFile: Map<string, number> }> {
  console.log(`\n=== ${setup}: bun test ${files.length === 0 ? '(every file)' : `${files.length} HTTP suites`}`);
  const proc = Bun.spawn([process.execPath, 'test', ...files, ...extra], {
    env: { ...process.env, GATEHOUSE_TEST_SETUP: setup },
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
  return { ...tally, exitCode, perFile: testsPerFile(output) };
}

const extra = process.argv.slice(2);
const total: Tally = { pass: 0, fail: 0, skip: 0 };
const add = (t: Tally) => {
  total.pass += t.pass;
  total.fail += t.fail;
  total.skip += t.skip;
};

const sqliteRun = await runBunTest('sqlite', [], extra);
add(sqliteRun);

const engines = [await postgresAvailability(), await redisAvailability()];
const missing = engines.find((availability) => !availability.ok);
if (missing !== undefined && !missing.ok) {
  // The tests those runs would have run: as many as each suite ran on SQLite (at least one a suite).
  const tests = HTTP_SUITES.reduce((sum, file) => sum + Math.max(1, sqliteRun.perFile.get(file) ?? 0), 0);
  console.log(`\nskipped: the PostgreSQL + Redis set-ups (${HTTP_SUITES.length} HTTP suites, ${tests} tests, twice): ${missing.reason}`);
  total.skip += tests * 2;
} else {
  for (const setup of ['postgres', 'postgres-2'] as const) add(await runBunTest(setup, HTTP_SUITES, extra));
}

if (failures.size > 0) console.log(`\nfailed:\n${[...failures].join('\n')}`);
console.log(`\n${total.pass} passed, ${total.fail} failed, ${total.skip} skipped`);
process.exit(total.fail === 0 ? 0 : 1);
