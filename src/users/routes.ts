import { Elysia, t } from 'elysia';
import { requireObjectBody } from '../http/conventions';
import { presentClientIp } from '../http/fields';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { nextLink } from '../http/cursor';
import { errorResponse, jsonHeaders, jsonResponse, noContent } from '../http/responses';
import { decodeQueryValue } from '../http/query';
import { type UserView, ClearAddressLimitsBody, CreatedUser, CreateUserBody, DisableUserBody, ListUsersQuery, lookupEmail, nextCursor, parseListQuery, User } from './model';
import type { UsersService } from './service';

const TAG = 'Users';
/** Account states and support operations (API.md §14). */
export const SUPPORT_TAG = 'Support operations';

/** GET /users/{id}'s answer, for its route and for the outer handler's direct read (src/app.ts). */
export function readUser(users: UsersService, id: string): Response | Promise<Response> {
  const view = users.view(id);
  return view instanceof Promise ? view.then(userAnswer) : userAnswer(view);
}
const userAnswer = (view: UserView | undefined) => (view === undefined ? errorResponse('NOT_FOUND') : jsonResponse(view));

/**
 * GET /users's answer for the query string `search`, for its route and for the outer handler's direct
 * lookup by address (src/app.ts). `url` is the request's, for the next page's Link: a lookup by
 * address alone never has a next page, so that caller may pass ''.
 */
export async function listUsers(users: UsersService, search: string, url: string): Promise<Response> {
  const options = parseListQuery(new URLSearchParams(search));
  const { items, total, more } = await users.list(options);
  const headers: Record<string, string> = paginationHeaders(total, options.perPage);
  const last = items.at(-1);
  if (more && last !== undefined) {
    const cursor = nextCursor(options, { createdAt: last.created_at, id: last.id });
    headers['x-pagination-next-cursor'] = cursor;
    headers['link'] = nextLink(url, { per_page: String(options.perPage), cursor });
  }
  return jsonResponse(items, headers);
}
function paginationHeaders(total: number, perPage: number) {
  return { 'x-pagination-total': String(total), 'x-pagination-total-pages': String(Math.ceil(total / perPage)) };
}

/** The query strings the direct lookup serves: the address alone, the support tool's lookup (API.md §14). */
export const isLookupByEmail = (search: string): boolean => /^\?email=[^&]*$/.test(search);

/**
 * GET /users's answer for a query string isLookupByEmail takes, as listUsers gives it, for the outer
 * handler's direct lookup: the one parameter decoded without parsing a general query, and its page
 * of at most one user answered at once on SQLite, with headers made once.
 */
export function lookUpByEmail(users: UsersService, search: string): Response | Promise<Response> {
  const value = decodeQueryValue(search.slice(EMAIL_PARAMETER.length));
  if (value === undefined) return listUsers(users, search, '');
  const email = lookupEmail(value);
  if (email === 'none') return lookupAnswer(undefined);
  const view = users.viewByEmail(email);
  return view instanceof Promise ? view.then(lookupAnswer) : lookupAnswer(view);
}
const EMAIL_PARAMETER = '?email=';
// listUsers's headers for a set of one user and for an empty one, at the default per_page (the lookup's query has none).
const LOOKUP_PER_PAGE = parseListQuery(new URLSearchParams()).perPage;
const ONE_USER = jsonHeaders(paginationHeaders(1, LOOKUP_PER_PAGE));
const NO_USER = jsonHeaders(paginationHeaders(0, LOOKUP_PER_PAGE));
const lookupAnswer = (view: UserView | undefined) => (view === undefined ? jsonResponse([], NO_USER) : jsonResponse([view], ONE_USER));

export function usersRoutes(users: UsersService) {
  const collection = new Elysia()
    .post(
      '/users',
      ({ body }) =>
        users.create({
          password: body.password,
          passwordHash: body.password_hash,
          email: body.email ?? null,
          clientIp: presentClientIp(body.client_ip),
        }),
      {
        body: CreateUserBody,
        ...documented({
          operationId: 'createUser', summary: 'Create a user',
          tag: TAG,
          description:
            'Returns the user with its recovery code, which is never shown again. Put this call behind a Captcha or another bot check. ' +
            'Send exactly one of password and password_hash; an imported hash is not breach-checked, and a string in no accepted format answers UNSUPPORTED_PASSWORD_HASH.',
          errors: ['INVALID_DATA', 'WEAK_PASSWORD', 'UNSUPPORTED_PASSWORD_HASH', 'TOO_MANY_REQUESTS', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
          ok: CreatedUser,
        }),
      },
    )
    .get(
      '/users',
      ({ request }) => listUsers(users, new URL(request.url).search, request.url),
      {
        query: ListUsersQuery,
        ...documented({
          operationId: 'listUsers', summary: 'List users',
          tag: TAG,
          description:
            'Invalid or out-of-range values fall back to their defaults. Headers X-Pagination-Total and X-Pagination-Total-Pages count the (filtered) set. ' +
            'Unless the page is the last one, the answer also carries X-Pagination-Next-Cursor and a Link header with rel="next": ' +
            'the URL of the next page, which continues by that cursor in the same sort and filter at a cost that does not grow with the depth. ' +
            'Only a cursor that cannot be read answers 400 INVALID_DATA.',
          errors: ['INVALID_DATA'],
          ok: t.Array(User),
          okHeaders: {
            'X-Pagination-Total': { description: 'Users in the (filtered) set', schema: { type: 'integer', minimum: 0 }, required: true },
            'X-Pagination-Total-Pages': { description: 'Pages of per_page users in the set; 0 for an empty set', schema: { type: 'integer', minimum: 0 }, required: true },
            'X-Pagination-Next-Cursor': { description: 'The cursor parameter of the next page; absent on the last page', schema: { type: 'string' } },
            Link: { description: 'The next page\'s URL with rel="next" (RFC 8288); absent on the last page', schema: { type: 'string' } },
          },
        }),
      },
    );

  // The hottest read: one query instead of the path check's row plus the view (it has no body to order 404
  // before), and its JSON built with headers made once (toUserView's type holds it to the User schema).
  const read = new Elysia().get(
    '/users/:id',
    ({ params }) => readUser(users, params.id),
    documented({ operationId: 'getUser', summary: 'Get a user', tag: TAG, errors: ['NOT_FOUND'], ok: User }),
  );

  const single = new Elysia()
    .use(pathResource('user', users.find))
    .delete(
      '/users/:id',
      async ({ user }) => {
        await users.delete(user.id);
        return noContent();
      },
      documented({
        operationId: 'deleteUser', summary: 'Delete a user',
        tag: TAG,
        description: 'Removes the user with its requests and TOTP credential.',
        errors: ['NOT_FOUND'],
      }),
    )
    .post('/users/:id/disable', ({ body, user }) => users.disable(user.id, body.until ?? null), {
      body: DisableUserBody,
      transform: requireObjectBody,
      ...documented({
        operationId: 'disableUser',
        summary: 'Disable a user',
        tag: SUPPORT_TAG,
        description:
          'Until `until`, or until enabled. A disabled user can still be read, listed, exported, deleted and enabled, and have its requests listed or deleted; ' +
          'logging in and changing its credentials answer USER_DISABLED. Disabling a disabled user replaces `until`. Writes user.disabled.',
        errors: ['NOT_FOUND', 'INVALID_DATA'],
        ok: User,
      }),
    })
    .post('/users/:id/enable', ({ user }) => users.enable(user.id), {
      ...documented({
        operationId: 'enableUser',
        summary: 'Enable a user',
        tag: SUPPORT_TAG,
        description: 'Takes no body. Enabling an enabled user answers it unchanged and writes no event; otherwise writes user.enabled.',
        errors: ['NOT_FOUND'],
        ok: User,
      }),
    })
    .post(
      '/users/:id/clear-lockouts',
      async ({ user }) => {
        await users.clearLockouts(user.id);
        return noContent();
      },
      documented({
        operationId: 'clearUserLockouts',
        summary: "End a user's lockouts and limits",
        tag: SUPPORT_TAG,
        description:
          'Takes no body. Ends every per-user lockout and limit: the second-factor lockouts (TOTP verify and register, reset-2fa, email verify, ' +
          'email update verify, passkey second factor) and the request-creation limits (password reset, email verification, email update, email sign-in). ' +
          "A request's own wrong-code count stays, and so does any address's login block. Writes lockouts.cleared.",
        errors: ['NOT_FOUND'],
      }),
    );

  const addresses = new Elysia().post(
    '/clear-address-limits',
    async ({ body }) => {
      await users.clearAddressLimits(body.client_ip);
      return noContent();
    },
    {
      body: ClearAddressLimitsBody,
      ...documented({
        operationId: 'clearAddressLimits',
        summary: "Lift an address's login block and refill its bucket",
        tag: SUPPORT_TAG,
        description:
          'client_ip names the address as it does everywhere (an IPv6 address by its /64, one embedding an IPv4 address by that address). ' +
          'Its login block and its wrong-password count end, and its bucket is full again. Writes address.cleared with that client_ip.',
        errors: ['INVALID_DATA'],
      }),
    },
  );

  return new Elysia().use(collection).use(read).use(single).use(addresses);
}
