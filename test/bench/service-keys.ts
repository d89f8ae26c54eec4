// Issue 36: GET /users/{id} with a keys file of 100 service keys against the same read with one
// --secret (API.md §17). Rounds alternate the two servers on the same data with the same wrk
// settings, so other work on the machine falls on both. Part of `bun run bench`; alone:
// `BENCH_ONLY=keys npx bun run bench` (KEYS_ROUNDS, default 2).
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digestOf, generateKey, keyLine } from '../../src/keys/model';
import { type Row, roundsTarget, type Target } from './report';
import { type RunningServer, startGatehouse, startProcess } from './server';

const KEYS = 100;
type Measure = (server: RunningServer, name: string, path: string, authorization: string) => Promise<Row>;

/** A keys file of 100 keys, the one the bench sends last (the lookup must not depend on where it is). */
function writeKeysFile(path: string): string {
  const key = generateKey();
  const names = Array.from({ length: KEYS }, (_, n) => `caller-${n}`);
  const lines = names.map((name, n) => keyLine({ name, scope: n % 2 === 0 ? '*' : 'read', digest: digestOf(n === KEYS - 1 ? key : generateKey()) }));
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}

const startWithKeys = (dir: string, keysFile: string): Promise<RunningServer> =>
  startProcess([process.execPath, 'run', 'src/main.ts', 'serve', '--port', '0', '--dir', dir, '--keys-file', keysFile, '--pwned-check', 'off']);

export async function keysBench(options: { dir: string; secret: string; userId: string; rounds: number; measure: Measure }) {
  const keysFile = join(options.dir, 'bench-keys');
  const key = writeKeysFile(keysFile);
  const path = `/users/${options.userId}`;
  const rows: Row[] = [];
  const ratios: number[] = [];
  const rate = (row: Row) => row.load!.requestsPerSecond;
  // One server at a time on the data: each measured alone, as it would run.
  const run = async (start: () => Promise<RunningServer>, name: string, authorization: string) => {
    const server = await start();
    try {
      return await options.measure(server, name, path, authorization);
    } finally {
      await server.stop();
    }
  };
  for (let round = 1; round <= options.rounds; round++) {
    const single = await run(() => startGatehouse(options.dir, options.secret), `GET /users/{id}, one --secret (round ${round})`, options.secret);
    const many = await run(() => startWithKeys(options.dir, keysFile), `GET /users/{id}, --keys-file of ${KEYS} keys (round ${round})`, key);
    ratios.push(rate(many) / rate(single));
    rows.push(single, { ...many, note: `${ratios.at(-1)!.toFixed(2)}× the one secret's requests/s` });
  }
  const targets: Target[] = [roundsTarget(`GET /users/{id}, ${KEYS} keys ÷ one secret, requests/s (mean of rounds)`, ratios, 0.95)];
  return { rows, targets };
}
