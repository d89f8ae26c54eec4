import type { ErrorCode } from '../errors';
import { type Caller, runAsActor, setCallerOf } from './caller';
import { errorResponse } from './responses';
import { failureResponse, MAX_BODY_BYTES } from './conventions';
import { withCommonHeaders } from './headers';
import { AccessLine, failureOf, type Logger } from './log';
import { routeTemplateOf } from './route-label';
import { generateId } from '../security/random';

/** Request ids only need to be unique, not secret: a random per-process prefix and a counter. */
const requestIdPrefix = generateId().slice(0, 8);
let requestCount = 0;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCount).toString(36)}`;

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
 * A GET of `prefix` + one id, answered without Elysia's router and context: for the hottest read
 * they were about a third of its CPU (docs/benchmarks.md). It must answer exactly as the app's route
 * of `template` (whose one parameter is `:id`) does, which serves the ids that are not plain
 * (escapes, slashes, overlong). A store that answers at once (SQLite) gives a Response, not a
 * Promise: no await on the way out.
 */
export interface DirectRead {
  prefix: string;
  template: string;
  /** The route's operationId, for the caller's scope. */
  operationId: string;
  answer: (id: string) => Response | Promise<Response>;
}
const PLAIN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A request Bun.serve routed by a template, with the template's parameters, percent-decoded. */
type RoutedRequest = Request & { params: Record<string, string> };

export type RequestHandler = ((request: Request) => Response | Promise<Response>) & {
  /**
   * The direct reads as Bun.serve `routes`, for the server: Bun hands them the id, so the request's
   * URL is never built (about 5% of the read's instructions). The handler itself serves the same
   * reads for everything else that calls it (tests, `app.handle`-style).
   */
  routes: Record<string, { GET: (request: RoutedRequest) => Response | Promise<Response> }>;
};

/**
 * The outermost request handler: request id, credential, size limit and the access log line,
 * all before Elysia routes anything, so an unknown path without the credential is 401.
 */
export function createRequestHandler(options: {
  /** The caller a credential belongs to, undefined for an unknown one (API.md §1, §17). */
  findCaller: (authorization: string | null) => Caller | undefined;
  log: Logger;
  route: (request: Request) => Promise<Response> | Response;
  docs: boolean;
  directReads?: DirectRead[];
  /** Told every answered request, with the template of the route it reached (undefined: none). */
  observe?: (method: string, route: string | undefined, status: number, seconds: number) => void;
  /** Told the name of the caller of every request that carried a known credential. */
  observeCaller?: (name: string) => void;
}): RequestHandler {
  const { observe, observeCaller, log, directReads = [] } = options;

  const handle = (request: Request): Response | Promise<Response> => {
    const started = performance.now();
    const url = request.url;
    const pathStart = pathStartOf(url);
    const path = pathOf(url, pathStart);
    const caller = admit(request, path, started);
    if (caller instanceof Response) return caller;
    const direct = request.method === 'GET' ? directReadOf(path) : undefined;
    if (direct !== undefined) return readDirectly(request, path, started, direct.read, direct.id, caller);
    // Only the router reads the URL itself; the direct reads use the path found above.
    const routable = withRoutableUrl(request, pathStart);
    if (caller === null) return route(routable, path, started, null);
    setCallerOf(routable, caller);
    return runAsActor(caller.name, () => route(routable, path, started, caller));
  };

  /** Through Elysia, which checks the caller's scope once it has matched the route (callerScopes). */
  function route(routable: Request, path: string, started: number, caller: Caller | null): Promise<Response> {
    return Promise.resolve(options.route(routable)).then((response) =>
      finish(routable, path, started, withCommonHeaders(response), routeTemplateOf(routable), caller),
    );
  }

  const routes = Object.fromEntries(
    directReads.map((read) => [
      read.template,
      {
        GET(request: RoutedRequest) {
          // Bun sends HEAD here too; it, and an id that is not plain once decoded, go the long way.
          const id = request.params.id ?? '';
          if (request.method !== 'GET' || !PLAIN_ID.test(id)) return handle(request);
          const started = performance.now();
          // The path as routed: an id sent with escapes (`%61bc`) is logged decoded (`abc`).
          const path = read.prefix + id;
          const caller = admit(request, path, started);
          return caller instanceof Response ? caller : readDirectly(request, path, started, read, id, caller);
        },
      },
    ]),
  );
  return Object.assign(handle, { routes });

  /**
   * The credential (unless the path is public), then the size limit: the answer if either refuses,
   * else the caller (null on a public path).
   */
  function admit(request: Request, path: string, started: number): Caller | null | Response {
    let caller: Caller | null = null;
    if (!isPublic(request.method, path, options.docs)) {
      const found = options.findCaller(request.headers.get('authorization'));
      if (found === undefined) return finish(request, path, started, refuseUnread(request, 'NOT_AUTHENTICATED'), undefined, null);
      caller = found;
    }
    if (Number(request.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) {
      return finish(request, path, started, refuseUnread(request, 'PAYLOAD_TOO_LARGE'), undefined, caller);
    }
    return caller;
  }

  /** The direct read checks the scope itself, where Elysia's route would (right after matching, before the 404). */
  function readDirectly(request: Request, path: string, started: number, read: DirectRead, id: string, caller: Caller | null): Response | Promise<Response> {
    if (caller !== null && !caller.permits(read.operationId)) {
      return finish(request, path, started, errorResponse('FORBIDDEN'), read.template, caller);
    }
    try {
      const answered = read.answer(id);
      if (!(answered instanceof Promise)) return finish(request, path, started, answered, read.template, caller);
      return answered.then(
        (response) => finish(request, path, started, response, read.template, caller),
        (error) => finish(request, path, started, failureResponse(request, error), undefined, caller),
      );
    } catch (error) {
      return finish(request, path, started, failureResponse(request, error), undefined, caller);
    }
  }

  /** `request`: the one the app handled, which carries its route template and noted failure. */
  function finish(request: Request, path: string, started: number, response: Response, template: string | undefined, caller: Caller | null): Response {
    const requestId = nextRequestId();
    const ms = performance.now() - started;
    const status = response.status;
    if (status >= 500) logFailure(request, requestId);
    observe?.(request.method, template, status, ms / 1000);
    const key = caller === null ? null : caller.name;
    if (key !== null) observeCaller?.(key);
    // Only the path: query strings may carry an email_query.
    log(new AccessLine(requestId, request.method, path, status, Math.round(ms * 100) / 100, key));
    return response;
  }

  function directReadOf(path: string) {
    for (const read of directReads) {
      if (!path.startsWith(read.prefix)) continue;
      const id = path.slice(read.prefix.length);
      if (PLAIN_ID.test(id)) return { read, id };
    }
    return undefined;
  }

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
