/** The hot operations the outer handler (handler.ts) answers without Elysia. */

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
export const PLAIN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A GET of exactly `path` whose query string (`?…`, or '' for none) `takes` accepts, answered
 * without Elysia as a DirectRead is, with that query string; other queries go to the app's route,
 * the reference the direct answers are tested against.
 */
export interface DirectQuery {
  path: string;
  operationId: string;
  takes: (search: string) => boolean;
  answer: (search: string) => Response | Promise<Response>;
}

/**
 * A POST to `path` whose whole input is its JSON body, answered without Elysia as a DirectRead is.
 * `answer` gets the value the route would validate (conventions.ts's rules: not UTF-8, not JSON or
 * nested too deep arrive as text) and must hold it to the route's own schema, INVALID_DATA else.
 * The route stays, for the document and as the reference the direct answers are tested against.
 */
export interface DirectPost {
  path: string;
  operationId: string;
  answer: (body: unknown) => Response | Promise<Response>;
}

/** A request Bun.serve routed by a template, with the template's parameters, percent-decoded. */
export type RoutedRequest = Request & { params: Record<string, string> };
