// Issue 26: GET /users/{id} against the floor of the stack, a minimal Elysia app doing the same work by
// hand (floor-server.ts) on the same database, and (issue 37) against a bare Bun.serve answering a
// fixed body (bare-server.ts). Rounds alternate the servers (bare, floor, Gatehouse, bare, ...) with
// the same wrk settings, so other work on the machine falls on all three.
// Part of `bun run bench`; alone: `BENCH_ONLY=floor npx bun run bench` (FLOOR_ROUNDS, default 6).
import { join } from 'node:path';
import { mean, type Row, roundsTarget, type Target } from './report';
import { type RunningServer, startBareServer, startProcess } from './server';

type Measure = (server: RunningServer, name: string, path: string) => Promise<Row>;

export const startFloorServer = (dir: string, secret: string): Promise<RunningServer> =>
  startProcess([process.execPath, 'run', join(import.meta.dir, 'floor-server.ts'), dir, secret]);

const rate = (row: Row) => row.load!.requestsPerSecond;

/**
 * Rows of every round, and three ratios: requests/s (Gatehouse ÷ floor, the target), CPU per
 * request (floor ÷ Gatehouse, which drifts less when other work shares the cores) and requests/s
 * against the bare server, each the mean of the rounds' own ratios; and, as a reference line, the
 * floor's own requests/s against the bare server.
 */
export async function floorBench(options: { dir: string; secret: string; gatehouse: RunningServer; userId: string; rounds: number; measure: Measure }) {
  const { gatehouse, userId, measure } = options;
  const floor = await startFloorServer(options.dir, options.secret);
  const bare = await startBareServer();
  const rows: Row[] = [];
  const rateRatios: number[] = [];
  const cpuRatios: number[] = [];
  const bareRatios: number[] = [];
  const floorBareRatios: number[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const ceiling = await measure(bare, `Bare Bun.serve, a fixed body (round ${round})`, `/users/${userId}`);
      const bottom = await measure(floor, `Floor: minimal Elysia app, GET /users/:id (round ${round})`, `/users/${userId}`);
      const ours = await measure(gatehouse, `GET /users/{id} (round ${round})`, `/users/${userId}`);
      rateRatios.push(rate(ours) / rate(bottom));
      cpuRatios.push(bottom.cpuUs! / ours.cpuUs!);
      bareRatios.push(rate(ours) / rate(ceiling));
      floorBareRatios.push(rate(bottom) / rate(ceiling));
      const note = `${rateRatios.at(-1)!.toFixed(2)}× the floor's requests/s, ${cpuRatios.at(-1)!.toFixed(2)}× its CPU per request, ${bareRatios.at(-1)!.toFixed(2)}× the bare server's requests/s`;
      rows.push(ceiling, { ...bottom, note: `${floorBareRatios.at(-1)!.toFixed(2)}× the bare server's requests/s` }, { ...ours, note });
    }
  } finally {
    await Promise.all([floor.stop(), bare.stop()]);
  }
  const targets: Target[] = [
    roundsTarget('GET /users/{id} ÷ minimal Elysia app, requests/s (mean of rounds)', rateRatios, 0.8),
    roundsTarget('minimal Elysia app ÷ GET /users/{id}, CPU µs/request (mean of rounds)', cpuRatios, 0.8),
    roundsTarget('GET /users/{id} ÷ bare Bun.serve, requests/s (mean of rounds)', bareRatios, 0.6),
  ];
  // Not a target: what the stack itself reaches against the bare server, beside Gatehouse's 0.6.
  const reference = `For reference, minimal Elysia app ÷ bare Bun.serve, requests/s (mean of rounds): ${mean(floorBareRatios).toFixed(2)}`;
  return { rows, targets, reference, rateRatios, cpuRatios, bareRatios };
}
