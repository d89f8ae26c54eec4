/**
 * On every answer (API.md §9): answers hold codes and recovery codes, so nothing may cache them, and
 * no browser may guess a type other than the one declared. Built into each response as it is made
 * (Elysia's default headers, errorResponse): adding them afterwards cost about 1 µs a request.
 * A response that sets its own Cache-Control keeps it (the docs' static files).
 */
export const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;
