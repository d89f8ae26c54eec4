import { timingSafeEqual } from 'node:crypto';
import type { ErrorCode } from '../errors';
import { errorResponse } from './responses';
import { MAX_BODY_BYTES } from './conventions';
import { withCommonHeaders } from './headers';
import { failureOf, type Logger } from './log';
import { routeTemplateOf } from './route-label';
import { generateId } from '../security/random';

/** Request ids only need to be unique, not secret: a random per-process prefix and a counter. */
const requestIdPrefix = generateId().slice(0, 8);
let requestCount = 0;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCount).toString(36)}`;

// Bun's one-shot hasher: a third of node:crypto's createHash cost, paid on every request.
const sha256 = (value: string) => Bun.SHA256.hash(value) as Uint8Array;

/** What is served without the credential (API.md §1): the health check, and the docs while they are on. */
function isPublic(method: string, path: string, docs: boolean): boolean {
  if (method !== 'GET') return false;
  if (path === '/health') return true;
  return docs && (path === '/docs' || path === '/docs/json' || path.startsWith('/docs/assets/'));
}

/**
 * Elysia finds the path by searching for '/' from index 11, assuming a host of four or more
 * characters; with `Host: x` it would route `/health?/users` to `/users` after we checked `/health`.
 * Bun hands on a relative URL (`/users`) for an HTTP/1.0 request without Host or with an empty one,
 * and an unparseable one for a Host such as `h:99999`, `[::1` or `a%zz`, on which `new URL` throws.
 * Such requests get a URL that parses and that Elysia reads the same way we do.
 */
const ELYSIA_PATH_SEARCH_START = 11;
function withRoutableUrl(request: Request, pathStart: number): Request {
  if (pathStart >= ELYSIA_PATH_SEARCH_START && URL.canParse(request.url)) return request;
  return new Request(`http://localhost${pathStart < 0 ? '/' : request.url.slice(pathStart)}`, request);
}

/** Where the path starts in a request's URL: absolute as usual, or relative when Bun had no Host to build it with. */
function pathStartOf(url: string): number {
  if (url.startsWith('/')) return 0;
  const authority = url.indexOf('//');
  return authority < 0 ? -1 : url.indexOf('/', authority + 2);
}

/**
 * The outermost request handler: request id, credential, size limit and the access log line,
 * all before Elysia routes anything, so an unknown path without the credential is 401.
 */
export function createRequestHandler(options: {
  secret: string;
  log: Logger;
  route: (request: Request) => Promise<Response> | Response;
  docs: boolean;
  /** Told every answered request, with the template of the route it reached (undefined: none). */
  observe?: (method: string, route: string | undefined, status: number, seconds: number) => void;
}): (request: Request) => Promise<Response> {
  const { observe, log } = options;
  const secretDigest = sha256(options.secret);
  const isAuthorized = (header: string | null) =>
    header !== null && timingSafeEqual(sha256(header), secretDigest);

  return async (received) => {
    const started = performance.now();
    const url = received.url;
    const pathStart = pathStartOf(url);
    const path = pathOf(url, pathStart);
    const request = withRoutableUrl(received, pathStart);
    const requestId = nextRequestId();
    let response: Response;
    if (!isPublic(request.method, path, options.docs) && !isAuthorized(request.headers.get('authorization'))) {
      response = refuseUnread(request, 'NOT_AUTHENTICATED');
    } else if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) {
      response = refuseUnread(request, 'PAYLOAD_TOO_LARGE');
    } else {
      response = withCommonHeaders(await options.route(request));
    }
    const ms = performance.now() - started;
    const status = response.status;
    if (status >= 500) logFailure(request, requestId);
    observe?.(request.method, routeTemplateOf(request), status, ms / 1000);
    // Only the path: query strings may carry an email_query.
    log({ request_id: requestId, method: request.method, path, status, ms: Math.round(ms * 100) / 100 });
    return response;
  };

  /** An unexpected failure, noted by the error hook, is logged here where the request's id is known. */
  function logFailure(request: Request, requestId: string): void {
    const failure = failureOf(request);
    if (failure !== undefined) log({ level: 'error', request_id: requestId, ...failure });
  }
}

/** Refused before its body was read: closing the connection stops a client still uploading it. */
function refuseUnread(request: Request, errorCode: ErrorCode): Response {
  return errorResponse(errorCode, request.body === null ? undefined : { connection: 'close' });
}

function pathOf(url: string, start: number): string {
  const query = url.indexOf('?', start);
  return start < 0 ? '/' : url.slice(start, query < 0 ? undefined : query);
}
