/** Where a request goes, read from its URL without building a URL object for the hot paths. */

/** What is served without the credential (API.md §1): the health check, and the docs while they are on. */
export function isPublic(method: string, path: string, docs: boolean): boolean {
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
export function withRoutableUrl(request: Request, pathStart: number): Request {
  if (pathStart >= ELYSIA_PATH_SEARCH_START && URL.canParse(request.url)) return request;
  return new Request(`http://localhost${pathStart < 0 ? '/' : request.url.slice(pathStart)}`, request);
}

/** Where the path starts in a request's URL: absolute as usual, or relative when Bun had no Host to build it with. */
export function pathStartOf(url: string): number {
  if (url.startsWith('/')) return 0;
  const authority = url.indexOf('//');
  return authority < 0 ? -1 : url.indexOf('/', authority + 2);
}

export function pathOf(url: string, start: number): string {
  const query = url.indexOf('?', start);
  return start < 0 ? '/' : url.slice(start, query < 0 ? undefined : query);
}
