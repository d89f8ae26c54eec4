import { timingSafeEqual } from 'node:crypto';
import { errorResponse } from './errors';
import { MAX_BODY_BYTES } from './conventions';
import { type Logger, setRequestId } from './log';
import { generateId } from '../security/random';

/** Request ids only need to be unique, not secret: a random per-process prefix and a counter. */
const requestIdPrefix = generateId().slice(0, 8);
let requestCount = 0;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCount).toString(36)}`;

// Bun's one-shot hasher: a third of node:crypto's createHash cost, paid on every request.
const sha256 = (value: string) => Bun.SHA256.hash(value) as Uint8Array;

/** Paths served without the credential (API.md §1). */
const isPublicPath = (path: string): boolean =>
  path === '/health' || path === '/docs' || path.startsWith('/docs/');

/**
 * The outermost request handler: request id, credential, size limit and the access log line,
 * all before Elysia routes anything, so an unknown path without the credential is 401.
 */
export function createRequestHandler(options: {
  secret: string;
  log: Logger;
  route: (request: Request) => Promise<Response> | Response;
}): (request: Request) => Promise<Response> {
  const secretDigest = sha256(options.secret);
  const isAuthorized = (header: string | null) =>
    header !== null && timingSafeEqual(sha256(header), secretDigest);

  return async (request) => {
    const started = performance.now();
    const requestId = nextRequestId();
    setRequestId(request, requestId);
    const path = pathOf(request.url);
    let response: Response;
    if (!isPublicPath(path) && !isAuthorized(request.headers.get('authorization'))) {
      response = errorResponse(401, 'NOT_AUTHENTICATED');
    } else if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) {
      response = errorResponse(413, 'PAYLOAD_TOO_LARGE');
    } else {
      response = await options.route(request);
    }
    // Only the path: query strings may carry an email_query.
    options.log({
      request_id: requestId,
      method: request.method,
      path,
      status: response.status,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
    return response;
  };
}

function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2);
  const query = url.indexOf('?', start);
  return start < 0 ? '/' : url.slice(start, query < 0 ? undefined : query);
}
