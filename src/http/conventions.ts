import { Elysia } from 'elysia';
import { AppError, errorResponse } from './errors';
import { type Logger, requestIdOf } from './log';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Bodies are JSON whatever the Content-Type says. Text that is not JSON is handed on as a string,
 * so it fails the route's object schema as INVALID_DATA only after the path's resources were
 * checked (API.md §1 puts 404 before body errors).
 */
async function parseJsonBody({ request }: { request: Request }): Promise<unknown> {
  const text = await readTextCapped(request);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A chunked body has no Content-Length to check up front, so stop reading once it is too big. */
async function readTextCapped(request: Request): Promise<string> {
  if (request.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new AppError(413, 'PAYLOAD_TOO_LARGE');
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/** Body parsing and the single mapping of every failure to `{"error": CODE}`. Register before any route. */
export function httpConventions(log: Logger) {
  return new Elysia({ name: 'http-conventions' })
    .onParse({ as: 'global' }, parseJsonBody)
    .onError({ as: 'global' }, ({ code, error: thrown, request }) => {
      // Elysia wraps whatever a parser throws (our 413) in its own ParseError.
      const error = code === 'PARSE' && thrown.cause instanceof AppError ? thrown.cause : thrown;
      if (error instanceof AppError) {
        const headers: Record<string, string> = {};
        if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds);
        return errorResponse(error.status, error.errorCode, headers);
      }
      if (code === 'VALIDATION' || code === 'PARSE') return errorResponse(400, 'INVALID_DATA');
      if (code === 'NOT_FOUND') return errorResponse(404, 'NOT_FOUND');
      const err = error instanceof Error ? error : new Error(String(error));
      log({ level: 'error', request_id: requestIdOf(request), error: err.name, stack: err.stack });
      return errorResponse(500, 'UNKNOWN_ERROR');
    });
}
