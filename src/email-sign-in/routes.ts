import { Elysia, t } from 'elysia';
import { presentClientIp } from '../http/fields';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import { User } from '../users/model';
import type { FindUser } from '../users/service';
import { AuthenticateWithCodeBody, CreatedEmailSignInRequest, CreateSignInRequestBody, EmailSignInRequest, TAG } from './model';
import type { EmailSignInService } from './service';

export function emailSignInRoutes(signIns: EmailSignInService, findUser: FindUser) {
  const byEmail = new Elysia()
    .post(
      '/email-sign-in-requests',
      ({ body }) => signIns.create({ email: body.email, clientIp: presentClientIp(body.client_ip) }),
      {
        body: CreateSignInRequestBody,
        ...documented({
          operationId: 'createEmailSignInRequest',
          summary: 'Create an email sign-in request',
          tag: TAG,
          description:
            "Returns the request with its 8-character code, which the caller emails to the address; the code is never shown again. " +
            'The request expires after 10 minutes. Checks in order: INVALID_DATA, TOO_MANY_REQUESTS for client_ip\'s tokens (spent also ' +
            'for an address nobody holds), NOT_FOUND (no user has this address, compared NFC-normalised and lower-cased), ' +
            'USER_DISABLED, TOO_MANY_REQUESTS (at most 3 creations per user in any 15 minutes).',
          errors: ['INVALID_DATA', 'TOO_MANY_REQUESTS', 'NOT_FOUND', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE'],
          ok: CreatedEmailSignInRequest,
        }),
      },
    )
    .post(
      '/authenticate/email-code',
      ({ body }) => signIns.authenticate({ requestId: body.request_id, code: body.code, clientIp: presentClientIp(body.client_ip) }),
      {
        body: AuthenticateWithCodeBody,
        ...documented({
          operationId: 'authenticateWithEmailCode',
          summary: 'Authenticate with an emailed code',
          tag: TAG,
          description:
            "Success answers the user, consumes the request and marks the user's email verified; the user's password, TOTP and " +
            'passkeys are untouched (ask for a second factor after this step as after a password). Checks in order: INVALID_DATA, ' +
            'INVALID_REQUEST (unknown, expired, used or invalidated request), TOO_MANY_REQUESTS (client_ip\'s tokens, and its login ' +
            'block: 5 wrong passwords, passkeys or codes from one address within 15 minutes block it for 15 minutes), INCORRECT_CODE ' +
            '(counts toward that block, and on the request: the 5th wrong code invalidates it), USER_DISABLED (only after a correct ' +
            'code; the request is not used up and works once the user is enabled). Of parallel correct redemptions exactly one ' +
            'succeeds; the others answer INVALID_REQUEST.',
          errors: ['INVALID_DATA', 'INVALID_REQUEST', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE'],
          ok: User,
        }),
      },
    );

  const ofUser = new Elysia()
    .use(pathResource('user', findUser))
    .get('/users/:id/email-sign-in-requests', ({ user }) => signIns.list(user.id), {
      ...documented({
        operationId: 'listEmailSignInRequests',
        summary: "List a user's email sign-in requests",
        tag: TAG,
        description: 'The live (unexpired, unused, not invalidated) requests, oldest first, ties by id. Codes are not included.',
        errors: ['NOT_FOUND'],
        ok: t.Array(EmailSignInRequest),
      }),
    })
    .delete(
      '/users/:id/email-sign-in-requests',
      async ({ user }) => {
        await signIns.deleteAllOf(user.id);
        return noContent();
      },
      documented({ operationId: 'deleteEmailSignInRequests', summary: "Delete all of a user's email sign-in requests", tag: TAG, errors: ['NOT_FOUND'] }),
    );

  return new Elysia().use(byEmail).use(ofUser);
}
