import { Elysia } from 'elysia';
import { presentClientIp } from '../http/fields';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import { User } from '../users/model';
import type { FindUser } from '../users/service';
import { AuthenticateBody, TAG, UpdatePasswordBody, VerifyPasswordBody } from './model';
import type { PasswordsService } from './service';

/** What every password check says of users imported without a hash (API.md §19). */
const MIGRATION =
  "For a user imported without a password hash, the password migration hook judges the password (after the rate limits); a match is stored and the check succeeds. " +
  'UNAVAILABLE when the hook gives no usable answer (timeout, another status, a body that is not {"match": true|false}); nothing is counted then.';

export function passwordsRoutes(passwords: PasswordsService, findUser: FindUser) {
  const authenticate = new Elysia().post(
    '/authenticate/password',
    ({ body }) => passwords.authenticate({ email: body.email, password: body.password, clientIp: presentClientIp(body.client_ip) }),
    {
      body: AuthenticateBody,
      ...documented({
        operationId: 'authenticateWithPassword', summary: 'Authenticate with email and password',
        tag: TAG,
        description:
          'Unknown email answers NOT_FOUND after the same work as a wrong password. Failures count toward the login block of client_ip. ' +
          'A disabled user answers USER_DISABLED only for the correct password, after the same work. ' +
          MIGRATION,
        errors: ['INVALID_DATA', 'TOO_MANY_REQUESTS', 'NOT_FOUND', 'INCORRECT_PASSWORD', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY', 'UNAVAILABLE'],
        ok: User,
      }),
    },
  );

  const forUser = new Elysia()
    .use(pathResource('user', findUser))
    .post(
      '/users/:id/verify-password',
      async ({ body, user }) => {
        await passwords.verify(user, { password: body.password, clientIp: presentClientIp(body.client_ip) });
        return noContent();
      },
      {
        body: VerifyPasswordBody,
        ...documented({
          operationId: 'verifyUserPassword', summary: "Verify a user's password",
          tag: TAG,
          description:
            'After 5 incorrect passwords from one client_ip within 15 minutes, that address is blocked for 15 minutes. ' +
            'A disabled user answers USER_DISABLED only for the correct password, after the same work. ' +
            MIGRATION,
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'INCORRECT_PASSWORD', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY', 'UNAVAILABLE'],
        }),
      },
    )
    .post(
      '/users/:id/update-password',
      async ({ body, user }) => {
        await passwords.update(user, {
          password: body.password,
          newPassword: body.new_password,
          clientIp: presentClientIp(body.client_ip),
        });
        return noContent();
      },
      {
        body: UpdatePasswordBody,
        ...documented({
          operationId: 'updateUserPassword', summary: "Update a user's password",
          tag: TAG,
          description:
            'A wrong current password answers INCORRECT_PASSWORD and counts toward the login block. A disabled user is refused (USER_DISABLED) before any check. ' +
            MIGRATION,
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'WEAK_PASSWORD', 'INCORRECT_PASSWORD', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY', 'UNAVAILABLE'],
        }),
      },
    );

  return new Elysia().use(authenticate).use(forUser);
}
