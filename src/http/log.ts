/** One structured line per event. Callers pass only fields that are safe to keep: never secrets, passwords or codes. */
export type Logger = (fields: Record<string, unknown>) => void;

/**
 * Lines logged in one turn of the event loop leave in one write: under load a write per request
 * (one access-log line each) cost a quarter of the throughput of GET /users/{id}. Flushed on exit too.
 */
let pending = '';
const FLUSH_AT = 64 * 1024;

function flushLog(): void {
  if (pending === '') return;
  const out = pending;
  pending = '';
  process.stdout.write(out);
}

export const stdoutLogger: Logger = (fields) => {
  if (pending === '') setImmediate(flushLog);
  pending += `${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`;
  if (pending.length >= FLUSH_AT) flushLog();
};
process.once('exit', flushLog);

export const silentLogger: Logger = () => {};

/** Request ids travel from the outer handler to Elysia's error hook through the Request object itself. */
const requestIds = new WeakMap<Request, string>();
export const setRequestId = (request: Request, id: string) => requestIds.set(request, id);
export const requestIdOf = (request: Request): string => requestIds.get(request) ?? '-';

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
