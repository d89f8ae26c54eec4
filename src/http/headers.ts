/**
 * On every answer (API.md §9): answers hold codes and recovery codes, so nothing may cache them, and
 * no browser may guess a type other than the one declared. Our own responses are built with them
 * (responses.ts); the outer handler adds them to any other answer (Elysia's JSON of a route's value,
 * the docs). A response that sets its own Cache-Control keeps it (the docs' static files).
 */
export const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

/** Adds API.md §9's headers where they are missing; one lookup for answers that have them. */
export function withCommonHeaders(response: Response): Response {
  const headers = response.headers;
  if (headers.has('x-content-type-options')) return response;
  headers.set('x-content-type-options', COMMON_HEADERS['x-content-type-options']);
  if (!headers.has('cache-control')) headers.set('cache-control', COMMON_HEADERS['cache-control']);
  return response;
}
