/**
 * Every kind of path GET /users/{id} can be sent, for the tests that hold the direct read to the
 * routed one: plain ids, a query, a trailing slash, escapes, overlong and odd ids. The escaped first
 * letter of `id` is at index 5.
 */
export const userPathKinds = (id: string, disabledId: string): string[] => [
  `/users/${id}`,
  `/users/${disabledId}`,
  `/users/${id}?fields=all`,
  `/users/${id}/`,
  `/users/${id.toUpperCase()}`,
  `/users/%${id.charCodeAt(0).toString(16)}${id.slice(1)}`,
  '/users/nosuchuser000000000000000',
  `/users/${'a'.repeat(64)}`,
  `/users/${'a'.repeat(65)}`,
  '/users/a%2Fb',
  '/users/a%zz',
  '/users/a.b',
  '/users/-_-',
];
