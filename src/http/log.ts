import { STANDARD_METHODS } from './methods';

/** One structured line per event. Callers pass only fields that are safe to keep: never secrets, passwords or codes. */
export type Logger = (fields: Record<string, unknown>) => void;

/** Where log lines go: process.stdout, or a stand-in in tests. */
export interface LineSink {
  /** `done` once the text has left (written to the file or pipe). */
  write(text: string, done?: () => void): unknown;
}

/**
 * Lines leave in batches: those logged within `flushAfterMs` (0: within one turn of the event loop)
 * in one write, or at once when `flushAt` characters wait. A write per request cost a quarter of
 * GET /users/{id}'s throughput; a write per turn (about 30 lines under load) still a tenth of its
 * CPU, in the system call, and one per 10 ms half that. The sink may hold `maxUnwritten` characters
 * not yet written; past that it is backed up (a slow reader of stdout), and lines wait here until
 * its writes complete instead of piling up in its buffer. (Its own 'drain' comes after nearly
 * every batch on a pipe, which takes less than a batch at once, and waiting for it cost
 * the access line about 0.2 µs: docs/benchmarks.md.) Past `maxPending` characters waiting, lines
 * are counted and dropped, so memory stays bounded, and a warning line says how many once the
 * sink keeps up again. `drain()` resolves once every line logged so far has been written: a clean
 * shutdown awaits it.
 */
export function createLineWriter(sink: LineSink, options: { maxPending: number; maxUnwritten: number; flushAt: number; flushAfterMs: number }) {
  let pending = '';
  let unwritten = 0;
  let scheduled = false;
  let backedUp = false;
  let dropped = 0;
  const waiting: (() => void)[] = [];

  const flush = () => {
    if (backedUp || pending === '') return;
    if (dropped > 0) {
      pending += formatLine({ level: 'warn', message: `${dropped} log lines dropped: stdout was not read fast enough` });
      dropped = 0;
    }
    const out = pending;
    pending = '';
    sink.write(out, () => written(out.length));
    // Counted once the write is under way: one that throws (EPIPE) will never call back, and a clean stop must not wait for it.
    unwritten += out.length;
    if (unwritten > options.maxUnwritten) backedUp = true;
  };

  const written = (length: number) => {
    unwritten -= length;
    if (backedUp && unwritten <= options.maxUnwritten) {
      backedUp = false;
      flush();
    }
    for (const wake of waiting.splice(0)) wake();
  };

  const flushLater = () => {
    scheduled = false;
    flush();
  };

  return {
    write(line: string): void {
      if (backedUp && pending.length >= options.maxPending) {
        dropped++;
        return;
      }
      pending += line;
      if (pending.length >= options.flushAt) flush();
      else if (!scheduled) {
        scheduled = true;
        if (options.flushAfterMs === 0) setImmediate(flushLater);
        else setTimeout(flushLater, options.flushAfterMs);
      }
    },
    /** Whatever is waiting goes now: at exit, where nothing can wait for a drain. */
    flush,
    async drain(): Promise<void> {
      flush();
      while (unwritten > 0 || pending !== '') await new Promise<void>((wake) => waiting.push(wake));
    },
  };
}

/** toISOString once per millisecond, not once per line: under load many lines share one. */
let isoMs = -1;
let iso = '';
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

/**
 * One request's access line. Every request writes one, so it is formatted by a template rather than
 * by JSON.stringify of its fields, which took twice as long (docs/benchmarks.md).
 */
export class AccessLine {
  [field: string]: unknown;
  constructor(
    /** Made by the handler of letters, digits and '-': written without escaping. */
    readonly request_id: string,
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly ms: number,
    /** The name of the caller's key (API.md §17), of `[a-z0-9_-]`: written without escaping; null before one is known. */
    readonly key: string | null,
  ) {}
}

const QUOTED_METHODS = new Map(STANDARD_METHODS.map((method) => [method, `"${method}"`]));

function formatAccessLine(line: AccessLine): string {
  const method = QUOTED_METHODS.get(line.method) ?? JSON.stringify(line.method);
  return `{"time":"${isoNow()}","request_id":"${line.request_id}","method":${method},"path":${JSON.stringify(line.path)},"status":${line.status},"ms":${hundredths(line.ms)},"key":${line.key === null ? 'null' : `"${line.key}"`}}\n`;
}

/**
 * `ms` rounded to hundredths, written as JSON writes that number: built from integers, since
 * JSON.stringify searches for the shortest digits of every fraction (a third of the line's cost).
 */
export function hundredths(ms: number): string {
  const total = Math.round(ms * 100);
  const fraction = total % 100;
  const whole = (total - fraction) / 100;
  if (fraction === 0) return `${whole}`;
  if (fraction % 10 === 0) return `${whole}.${fraction / 10}`;
  return `${whole}.${fraction < 10 ? '0' : ''}${fraction}`;
}

/** `{"time":...,` followed by the fields: no copy of the fields into a new object per line. */
export function formatLine(fields: Record<string, unknown>): string {
  if (fields instanceof AccessLine) return formatAccessLine(fields);
  const rest = JSON.stringify(fields);
  return `{"time":"${isoNow()}"${rest === '{}' ? '}' : `,${rest.slice(1)}`}\n`;
}

const stdoutLines = createLineWriter(process.stdout, { maxPending: 8 * 1024 * 1024, maxUnwritten: 1024 * 1024, flushAt: 64 * 1024, flushAfterMs: 10 });
process.once('exit', stdoutLines.flush);

export const stdoutLogger: Logger = (fields) => stdoutLines.write(formatLine(fields));
/** Resolves once every line logged to stdout so far is written: await before a clean exit. */
export const drainStdoutLog = (): Promise<void> => stdoutLines.drain();

export const silentLogger: Logger = () => {};

/**
 * An unexpected failure's description, from Elysia's error hook to the outer handler, which logs it
 * with the request's id. Only failing requests get an entry: one for every request (the request id,
 * before) cost about 1 µs of GET /users/{id}, most of it in JSC's upkeep of weak tables.
 */
const failures = new WeakMap<Request, Record<string, unknown>>();
export const noteFailure = (request: Request, description: Record<string, unknown>) => failures.set(request, description);
export const failureOf = (request: Request): Record<string, unknown> | undefined => failures.get(request);

/**
 * What may be logged of an unexpected error: its name, the codes of its causes, and where it was
 * thrown. A failed query's message holds its SQL and parameters (hashes, codes, emails), so no
 * message of a query error or of a database driver's error is ever written.
 */
export function describeError(error: unknown): Record<string, unknown> {
  const err = error instanceof Error ? error : new Error(String(error));
  const causes: string[] = [];
  let carriesValues = 'params' in err;
  for (let cause = err.cause, depth = 0; cause instanceof Error && depth < 4; cause = cause.cause, depth++) {
    const { code, errno } = cause as { code?: unknown; errno?: unknown };
    causes.push([cause.name, code, errno].filter((part) => typeof part === 'string' || typeof part === 'number').join(' '));
    carriesValues ||= 'params' in cause || code !== undefined;
  }
  const frames = (err.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).slice(0, 8);
  return {
    error: err.name,
    ...(carriesValues ? {} : { detail: err.message.split('\n')[0] }),
    ...(causes.length > 0 ? { cause: causes.join(' <- ') } : {}),
    stack: frames.map((line) => line.trim()).join(' | '),
  };
}
