import { Elysia } from 'elysia';
import { AppError } from '../errors';
import { errorResponse } from './responses';
import { describeError, type Logger, noteFailure } from './log';

export const MAX_BODY_BYTES = 64 * 1024;
/** Request bodies are flat objects; this leaves ample room for nested unknown fields. */
export const MAX_BODY_DEPTH = 32;

/** Handed on for a body that is not UTF-8: a string, so it fails every body schema. */
const NOT_UTF8 = 'body is not valid UTF-8';

/**
 * Bodies are JSON whatever the Content-Type says. Text that is not JSON is handed on as a string,
 * so it fails the route's object schema as INVALID_DATA only after the path's resources were
 * checked (API.md §1 puts 404 before body errors). JSON nested deeper than MAX_BODY_DEPTH is handed
 * on as text too: Elysia's validation error serialises the rejected value recursively, which
 * overflowed the stack (500) on a 64 KiB body of nested arrays and took most of a second on nested objects.
 * Bytes that are not UTF-8 are never decoded with replacement characters, which would make
 * different passwords equal (API.md §9); they are handed on the same way.
 */
const parseJsonBody = ({ request }: { request: Request }): Promise<unknown> => readBodyValue(request);

/**
 * The value a route validates, by the rules above. A body of stated length is read at once (the
 * outer handler refused a length over the limit); a chunked one is read with the cap.
 */
export async function readBodyValue(request: Request): Promise<unknown> {
  const text = request.body !== null && request.headers.has('content-length') ? utf8Of(await request.bytes()) : await readTextCapped(request);
  return bodyValueOf(text);
}

function bodyValueOf(text: string | undefined): unknown {
  if (text === undefined) return NOT_UTF8;
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return text;
  }
  return nestedDeeperThan(value, MAX_BODY_DEPTH) ? text : value;
}

/** Iterative, so that the check itself cannot overflow the stack. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** A chunked body has no Content-Length to check up front, so stop reading once it is too big. */
async function readTextCapped(request: Request): Promise<string | undefined> {
  if (request.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new AppError('PAYLOAD_TOO_LARGE');
    chunks.push(chunk);
  }
  return utf8Of(Buffer.concat(chunks));
}

/** The bytes as text, or undefined where they are not UTF-8 (never replacement characters). */
function utf8Of(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A route's `transform` where every body field is optional: Elysia's normaliser would turn a body
 * that is not an object into `{}`, so it would pass. Runs after the path's 404 check.
 */
export const requireObjectBody = ({ body }: { body: unknown }) => {
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw new AppError('INVALID_DATA');
};

/**
 * Body parsing and the single mapping of every failure to `{"error": CODE}`. Register before any route.
 * An unexpected failure is noted for the outer handler, which logs it with the request's id.
 */
export function httpConventions() {
  return new Elysia({ name: 'http-conventions' })
    .onParse({ as: 'global' }, parseJsonBody)
    .onError({ as: 'global' }, ({ code, error: thrown, request }) => {
      // Elysia wraps whatever a parser throws (our 413) in its own ParseError.
      const error = code === 'PARSE' && thrown.cause instanceof AppError ? thrown.cause : thrown;
      if (error instanceof AppError) return appErrorResponse(error);
      // A response that fails its own schema is our bug, not the caller's bad data.
      const isResponseCheck = code === 'VALIDATION' && (error as { type?: string }).type === 'response';
      if ((code === 'VALIDATION' && !isResponseCheck) || code === 'PARSE') return errorResponse('INVALID_DATA');
      if (code === 'NOT_FOUND') return errorResponse('NOT_FOUND');
      return unexpectedFailure(request, error);
    });
}

function appErrorResponse(error: AppError): Response {
  const retryAfter = error.retryAfterSeconds;
  return errorResponse(error.errorCode, retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) });
}

/** What a route outside the router (the direct reads) answers for a thrown error: its AppError (503 while the database is down), else UNKNOWN_ERROR. */
export function failureResponse(request: Request, error: unknown): Response {
  return error instanceof AppError ? appErrorResponse(error) : unexpectedFailure(request, error);
}

/** UNKNOWN_ERROR, with the error noted for the outer handler's log line (never its message if it holds values). */
export function unexpectedFailure(request: Request, error: unknown): Response {
  noteFailure(request, describeError(error));
  return errorResponse('UNKNOWN_ERROR');
}

/**
 * Bun.serve's `error` handler, for a failure that escapes the request handler (which catches its
 * own): UNKNOWN_ERROR as on any route, and an error line, where Bun would answer a plain 500, or in
 * development mode a page with the error's message and stack.
 */
export const escapedFailure = (log: Logger) => (error: unknown): Response => {
  log({ level: 'error', ...describeError(error) });
  return errorResponse('UNKNOWN_ERROR');
};
