// Issue 26: GET /users/{id} against the floor of the stack, a minimal Elysia app doing the same work by
// hand (floor-server.ts) on the same database. Rounds alternate the two servers (floor, Gatehouse,
// floor, Gatehouse, ...) with the same wrk settings, so other work on the machine falls on both.
// Part of `bun run bench`; alone: `BENCH_ONLY=floor npx bun run bench` (FLOOR_ROUNDS, default 2).
import { join } from 'node:path';
import type { Row, Target } from './report';
import { type RunningServer, startProcess } from './server';

type Measure = (server: RunningServer, name: string, path: string) => Promise<Row>;

export const startFloorServer = (dir: string, secret: string): Promise<RunningServer> =>
  startProcess([process.execPath, 'run', join(import.meta.dir, 'floor-server.ts'), dir, secret]);

const rate = (row: Row) => row.load!.requestsPerSecond;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * Rows of every round, and two ratios: requests/s (Gatehouse ÷ floor, the target) and CPU per
 * request (floor ÷ Gatehouse, which drifts less when other work shares the cores), each the mean
 * of the rounds' own ratios.
 */
export async function floorBench(options: { dir: string; secret: string; gatehouse: RunningServer; userId: string; rounds: number; measure: Measure }) {
  const { gatehouse, userId, measure } = options;
  const floor = await startFloorServer(options.dir, options.secret);
  const rows: Row[] = [];
  const rateRatios: number[] = [];
  const cpuRatios: number[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const bottom = await measure(floor, `Floor: minimal Elysia app, GET /users/:id (round ${round})`, `/users/${userId}`);
      const ours = await measure(gatehouse, `GET /users/{id} (round ${round})`, `/users/${userId}`);
      rateRatios.push(rate(ours) / rate(bottom));
      cpuRatios.push(bottom.cpuUs! / ours.cpuUs!);
      rows.push(bottom, { ...ours, note: `${rateRatios.at(-1)!.toFixed(2)}× the floor's requests/s, ${cpuRatios.at(-1)!.toFixed(2)}× its CPU per request` });
    }
  } finally {
    await floor.stop();
  }
  const targets: Target[] = [
    { name: 'GET /users/{id} ÷ minimal Elysia app, requests/s (mean of rounds)', ratio: mean(rateRatios), rule: '≥ 0.8', met: mean(rateRatios) >= 0.8 },
    { name: 'minimal Elysia app ÷ GET /users/{id}, CPU µs/request (mean of rounds)', ratio: mean(cpuRatios), rule: '≥ 0.8', met: mean(cpuRatios) >= 0.8 },
  ];
  return { rows, targets, rateRatios, cpuRatios };
}
