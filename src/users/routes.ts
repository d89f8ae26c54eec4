import { Elysia, t } from 'elysia';
import type { Deps } from '../deps';
import { documented, noContent } from '../http/docs';
import { emailAlreadyUsed, notFound } from '../http/errors';
import { assertStrongPassword, pathUser, spendAddressToken } from '../http/guards';
import { presentClientIp } from '../http/models';
import { normalizeEmail } from '../security/email-address';
import { CreatedUser, CreateUserBody, ListUsersQuery, User } from './model';
import { listUsers, type UserQueries } from './repository';
import { parseListQuery } from './list-query';
import { createUser, deleteUser } from './service';

const TAG = 'Users';

export function usersRoutes(deps: Deps, queries: UserQueries) {
  const collection = new Elysia()
    .post(
      '/users',
      async ({ body }) => {
        const email = body.email == null ? null : normalizeEmail(body.email);
        spendAddressToken(deps, presentClientIp(body.client_ip));
        await assertStrongPassword(deps, body.password);
        if (email !== null && queries.findRowByEmail(email)) throw emailAlreadyUsed();
        return createUser(deps, { password: body.password, email });
      },
      {
        body: CreateUserBody,
        ...documented({
          summary: 'Create a user',
          tag: TAG,
          description:
            'Returns the user with its recovery code, which is never shown again. Put this call behind a Captcha or another bot check.',
          errors: ['INVALID_DATA', 'WEAK_PASSWORD', 'TOO_MANY_REQUESTS', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
          ok: CreatedUser,
        }),
      },
    )
    .get(
      '/users',
      ({ request, set }) => {
        // From the URL itself: Elysia's parsed query keeps only one value of a repeated parameter.
        const options = parseListQuery(new URL(request.url).searchParams);
        const { items, total } = listUsers(queries, options);
        set.headers['x-pagination-total'] = String(total);
        set.headers['x-pagination-total-pages'] = String(Math.ceil(total / options.perPage));
        return items;
      },
      {
        query: ListUsersQuery,
        ...documented({
          summary: 'List users',
          tag: TAG,
          description:
            'Invalid or out-of-range values fall back to their defaults. Headers X-Pagination-Total and X-Pagination-Total-Pages count the (filtered) set.',
          errors: [],
          ok: t.Array(User),
        }),
      },
    );

  // One query instead of pathUser's row plus the view: this is the hottest read, and it has no body to order 404 before.
  const read = new Elysia().get(
    '/users/:id',
    ({ params }) => {
      const view = queries.findView(params.id);
      if (view === undefined) throw notFound();
      return view;
    },
    documented({ summary: 'Get a user', tag: TAG, errors: ['NOT_FOUND'], ok: User }),
  );

  const single = new Elysia()
    .use(pathUser(queries.findRow))
    .delete(
      '/users/:id',
      ({ params }) => {
        deleteUser(deps, params.id);
        return noContent();
      },
      documented({
        summary: 'Delete a user',
        tag: TAG,
        description: 'Removes the user with its requests and TOTP credential.',
        errors: ['NOT_FOUND'],
      }),
    );

  return new Elysia().use(collection).use(read).use(single);
}
