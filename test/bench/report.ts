import { cpus, totalmem } from 'node:os';
import type { LoadResult, LoadSettings } from './wrk';

export interface Row {
  scenario: string;
  load?: LoadResult;
  /** For rows measured without wrk (the hashing ceiling). */
  perSecond?: number;
  peakRssMb?: number;
  /** CPU time the measured process used per request (per verify for the hashing ceiling), in µs. */
  cpuUs?: number;
  note?: string;
}

export interface Target {
  name: string;
  ratio: number;
  /** What the ratio is compared against, e.g. "≥ 0.6". */
  rule: string;
  met: boolean;
  /** For a mean of rounds: the standard error of that mean, printed beside it (a 0.61 ± 0.05 is a coin toss at 0.6). */
  standardError?: number;
}

export const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
/** The standard error of `values`' mean (sample standard deviation ÷ √n); NaN for fewer than two. */
export function standardError(values: number[]): number {
  const m = mean(values);
  return Math.sqrt(values.reduce((sum, value) => sum + (value - m) ** 2, 0) / (values.length - 1) / values.length);
}

/** A ratio against its limit; `roundRatios`, when the ratio comes from rounds, give its standard error. */
export function target(name: string, ratio: number, op: '≥' | '≤', limit: number, roundRatios?: number[]): Target {
  const spread = roundRatios === undefined ? {} : { standardError: standardError(roundRatios) };
  return { name, ratio, rule: `${op} ${limit}`, met: op === '≥' ? ratio >= limit : ratio <= limit, ...spread };
}

/** A target on the mean of the rounds' ratios, with its standard error. */
export const roundsTarget = (name: string, ratios: number[], limit: number): Target => target(name, mean(ratios), '≥', limit, ratios);

const fixed = (value: number | undefined, digits: number) => (value === undefined ? '' : value.toFixed(digits));

export function table(rows: Row[]): string {
  const lines = [
    '| Scenario | Requests/s | p50 ms | p99 ms | CPU µs/request | Peak RSS MB | Notes |',
    '|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const rate = row.load?.requestsPerSecond ?? row.perSecond;
    const notes = [row.note, row.load && row.load.errors > 0 ? `${row.load.errors} errors` : undefined].filter(Boolean).join('; ');
    lines.push(
      `| ${row.scenario} | ${fixed(rate, rate !== undefined && rate < 1000 ? 1 : 0)} | ${fixed(row.load?.p50Ms, 2)} | ${fixed(row.load?.p99Ms, 2)} | ${fixed(row.cpuUs, row.cpuUs !== undefined && row.cpuUs < 100 ? 1 : 0)} | ${fixed(row.peakRssMb, 1)} | ${notes} |`,
    );
  }
  return lines.join('\n');
}

export function targetLines(targets: Target[]): string {
  const error = (t: Target) => (t.standardError === undefined || Number.isNaN(t.standardError) ? '' : ` ± ${t.standardError.toFixed(2)}`);
  return targets.map((t) => `- ${t.met ? 'met' : 'NOT met'}: ${t.name}: ${t.ratio.toFixed(2)}${error(t)} (target ${t.rule})`).join('\n');
}

export function machine(settings: LoadSettings): string {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  return [
    `Machine: ${cpu}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, Linux, Bun ${Bun.version}.`,
    `Load: wrk, ${settings.connections} connections, ${settings.threads} threads, ${settings.seconds} s per scenario (after a 1 s warm-up), on the same machine as the server.`,
  ].join('\n');
}
