import { AppError, type ErrorCode } from '../errors';
import { type Caller, runAsActor, setCallerOf } from './caller';
import { errorResponse } from './responses';
import { failureResponse, MAX_BODY_BYTES, readBodyValue } from './conventions';
import { withCommonHeaders } from './headers';
import { AccessLine, failureOf, type Logger } from './log';
import { routeTemplateOf } from './route-label';
import { generateId } from '../security/random';
import { type DirectPost, type DirectQuery, type DirectRead, PLAIN_ID, type RoutedRequest } from './direct-routes';
import { isPublic, pathOf, pathStartOf, withRoutableUrl } from './request-path';

/** Request ids only need to be unique, not secret: a random per-process prefix and a counter. */
const requestIdPrefix = generateId().slice(0, 8);
let requestCount = 0;
const nextRequestId = () => `${requestIdPrefix}-${(++requestCount).toString(36)}`;

export type RequestHandler = ((request: Request) => Response | Promise<Response>) & {
  /**
   * The direct reads as Bun.serve `routes`, for the server: Bun hands them the id, so the request's
   * URL is never built (about 5% of the read's instructions). The handler itself serves the same
   * reads for everything else that calls it (tests, `app.handle`-style).
   */
  routes: Record<string, { GET?: (request: RoutedRequest) => Response | Promise<Response>; POST?: (request: Request) => Response | Promise<Response> }>;
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
  directPosts?: DirectPost[];
  directQueries?: DirectQuery[];
  /** Told every answered request, with the template of the route it reached (undefined: none). */
  observe?: (method: string, route: string | undefined, status: number, seconds: number) => void;
  /** Told the name of the caller of every request that carried a known credential. */
  observeCaller?: (name: string) => void;
}): RequestHandler {
  const { observe, observeCaller, log, directReads = [] } = options;
  const directPosts = new Map((options.directPosts ?? []).map((post) => [post.path, post]));
  // A direct query is read like a direct read whose "id" is the query string.
  const directQueries = new Map((options.directQueries ?? []).map((query) => [query.path, { ...query, prefix: query.path, template: query.path }]));

  const handle = (request: Request): Response | Promise<Response> => {
    const started = performance.now();
    const url = request.url;
    const pathStart = pathStartOf(url);
    const path = pathOf(url, pathStart);
    const caller = admit(request, path, started);
    if (caller instanceof Response) return caller;
    const direct = request.method === 'GET' ? directReadOf(path) : undefined;
    if (direct !== undefined) return readDirectly(request, path, started, direct.read, direct.id, caller);
    const query = request.method === 'GET' ? directQueries.get(path) : undefined;
    const search = query === undefined ? '' : searchOf(url);
    if (query !== undefined && query.takes(search)) return readDirectly(request, path, started, query, search, caller);
    const post = request.method === 'POST' ? directPosts.get(path) : undefined;
    if (post !== undefined) return postDirectly(request, started, post, caller);
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

  const routes: RequestHandler['routes'] = Object.fromEntries(
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
  for (const query of directQueries.values()) {
    routes[query.path] = {
      GET(request: RoutedRequest) {
        const search = searchOf(request.url);
        if (request.method !== 'GET' || !query.takes(search)) return handle(request);
        const started = performance.now();
        const caller = admit(request, query.path, started);
        return caller instanceof Response ? caller : readDirectly(request, query.path, started, query, search, caller);
      },
    };
  }
  for (const post of directPosts.values()) {
    routes[post.path] = {
      POST(request: Request) {
        const started = performance.now();
        const caller = admit(request, post.path, started);
        return caller instanceof Response ? caller : postDirectly(request, started, post, caller);
      },
    };
  }
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

  /** In Elysia's order: the body is read (413 for a chunked one too long), then the scope, then the answer checks the body. */
  async function postDirectly(request: Request, started: number, post: DirectPost, caller: Caller | null): Promise<Response> {
    let body: unknown;
    try {
      body = await readBodyValue(request);
    } catch (error) {
      // Refused while parsing, Elysia counts no route. A body cut off on its way is bad data, as its parser calls it; our 413 stays.
      return finish(request, post.path, started, failureResponse(request, error instanceof AppError ? error : new AppError('INVALID_DATA')), undefined, caller);
    }
    let response: Response;
    try {
      response = caller !== null && !caller.permits(post.operationId) ? errorResponse('FORBIDDEN') : await post.answer(body);
    } catch (error) {
      response = failureResponse(request, error);
    }
    return finish(request, post.path, started, response, post.path, caller);
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

/** The query string with its `?`, or '' for none. */
function searchOf(url: string): string {
  const at = url.indexOf('?');
  return at < 0 ? '' : url.slice(at);
}

/** Refused before its body was read: closing the connection stops a client still uploading it. */
function refuseUnread(request: Request, errorCode: ErrorCode): Response {
  return errorResponse(errorCode, request.body === null ? undefined : { connection: 'close' });
}
