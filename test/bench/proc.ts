import { readFileSync } from 'node:fs';

export const SAMPLE_INTERVAL_MS = 100;

/** Resident set size of a process in MiB, from /proc (VmRSS now, VmHWM the peak of its lifetime). */
export function readMemory(pid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const rssMb = kb('VmRSS') / 1024;
    // An exited process not yet reaped still has a status file, without memory lines.
    return Number.isNaN(rssMb) ? null : { rssMb, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return null; // the process is gone
  }
}

/** Samples VmRSS every 100 ms while `work` runs and returns the highest sample alongside its result. */
export async function withPeakRss<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakRssMb: number }> {
  let peak = readMemory(pid)?.rssMb ?? 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, readMemory(pid)?.rssMb ?? 0);
  }, SAMPLE_INTERVAL_MS);
  try {
    const result = await work();
    peak = Math.max(peak, readMemory(pid)?.rssMb ?? 0);
    return { result, peakRssMb: peak };
  } finally {
    clearInterval(timer);
  }
}

/** CPU time the process has used so far (user + system), in clock ticks of 10 ms. */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * wrk stops with requests still queued in the server (argon2 queues, slow pages); waits until
 * the process has used under 10% of a core for 300 ms so the next scenario starts clean.
 */
export async function waitForIdle(pid: number, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const before = cpuTicks(pid);
    await Bun.sleep(300);
    if (cpuTicks(pid) - before <= 3) return;
  }
  throw new Error(`process ${pid} stayed busy for ${timeoutMs} ms`);
}
