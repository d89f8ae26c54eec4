import { SQL } from 'bun';

/** PostgreSQL did not answer in time or could not be reached: the request answers 503 UNAVAILABLE. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Bun's own codes for a connection that failed, closed or never opened. */
const CONNECTION_FAILURES = new Set([
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_FAILED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
]);

/**
 * SQLSTATEs of a server that is going away, not yet up, full, or too slow: 57P01 admin shutdown
 * (a fast stop ends every session with it), 57P02 crash shutdown, 57P03 cannot connect now (starting
 * or in recovery), 53300 too many connections, 57014 statement timeout, and class 08 (connection exception).
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/** The driver's error, under Drizzle's DrizzleQueryError (which keeps it as `cause`) if need be. */
export function postgresError(error: unknown): SQL.PostgresError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof SQL.PostgresError) return e;
  }
  return undefined;
}

/** SQLSTATE 23505; `constraint` narrows it to one index, e.g. 'users_email_unique'. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg = postgresError(error);
  return pg?.errno === '23505' && (constraint === undefined || pg.constraint === constraint);
}

/** SQLSTATE 23503: a row that references a user deleted since the route loaded it. */
export function isForeignKeyViolation(error: unknown): boolean {
  return postgresError(error)?.errno === '23503';
}

/** Awaits a write of a row that references a user: false when the user was deleted meanwhile (23503). */
export async function writtenUnlessUserGone(write: PromiseLike<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (isForeignKeyViolation(error)) return false;
    throw error;
  }
}

/** True when the request should answer 503 UNAVAILABLE rather than 500. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
  }
  const pg = postgresError(error);
  if (pg === undefined) return false;
  if (CONNECTION_FAILURES.has(pg.code)) return true;
  const state = pg.errno ?? '';
  return UNAVAILABLE_STATES.has(state) || state.startsWith('08');
}
