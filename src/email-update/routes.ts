import { Elysia, t } from 'elysia';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import type { FindUser } from '../users/service';
import { CreateEmailUpdateBody, EmailUpdateRequest, NewEmail, TAG, VerifyNewEmailBody } from './model';
import type { EmailUpdateService } from './service';


export function emailUpdateRoutes(updates: EmailUpdateService, findUser: FindUser) {
  const forUser = new Elysia()
    .use(pathResource('user', findUser))
    .post(
      '/users/:id/email-update-requests',
      ({ body, user }) => updates.create(user, body.email),
      {
        body: CreateEmailUpdateBody,
        ...documented({
          operationId: 'createEmailUpdateRequest', summary: 'Create an email update request',
          tag: TAG,
          description:
            'Send the code to the new address. The address is stored NFC-normalised and lower-cased; the user\'s own current address is allowed. ' +
            'At most 3 creations per user in any 15 minutes (calls refused with EMAIL_ALREADY_USED count too). Expires after 10 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE'],
          ok: EmailUpdateRequest,
        }),
      },
    )
    .get('/users/:id/email-update-requests', ({ user }) => updates.list(user.id), {
      ...documented({
        operationId: 'listEmailUpdateRequests', summary: "List the user's live email update requests",
        tag: TAG,
        description: 'Oldest first, ties by id. Expired and invalidated requests are not listed.',
        errors: ['NOT_FOUND'],
        ok: t.Array(EmailUpdateRequest),
      }),
    })
    .delete(
      '/users/:id/email-update-requests',
      async ({ user }) => {
        await updates.deleteAllOf(user.id);
        return noContent();
      },
      documented({ operationId: 'deleteEmailUpdateRequests', summary: "Delete all of the user's email update requests", tag: TAG, errors: ['NOT_FOUND'] }),
    );

  const byId = new Elysia()
    .get(
      '/email-update-requests/:id',
      ({ params }) => updates.get(params.id),
      documented({
        operationId: 'getEmailUpdateRequest', summary: 'Get an email update request',
        tag: TAG,
        description: 'NOT_FOUND when it does not exist, has expired or was invalidated.',
        errors: ['NOT_FOUND'],
        ok: EmailUpdateRequest,
      }),
    )
    .delete(
      '/email-update-requests/:id',
      async ({ params }) => {
        await updates.delete(params.id);
        return noContent();
      },
      documented({
        operationId: 'deleteEmailUpdateRequest', summary: 'Delete an email update request',
        tag: TAG,
        description: 'NOT_FOUND when it does not exist, has expired or was invalidated.',
        errors: ['NOT_FOUND'],
      }),
    )
    .post(
      '/verify-new-email',
      ({ body }) => updates.confirm({ requestId: body.request_id, code: body.code }),
      {
        body: VerifyNewEmailBody,
        ...documented({
          operationId: 'verifyNewEmail', summary: 'Confirm an email update with its code',
          tag: TAG,
          description:
            'Success sets the user\'s email to the new address, verified, and invalidates every email update request for that address ' +
            '(any user) and every password reset and email sign-in request of the user. Checks in order: INVALID_DATA, INVALID_REQUEST (unknown, expired ' +
            'or invalidated request), TOO_MANY_REQUESTS (5 wrong codes of this user here within 15 minutes lock this endpoint for the user ' +
            'for 15 minutes; verify-email has its own lockout; a correct code clears the count), INCORRECT_CODE (the 5th wrong code ' +
            'invalidates the request), EMAIL_ALREADY_USED (another user took the address meanwhile; the request is invalidated).',
          errors: ['INVALID_DATA', 'INVALID_REQUEST', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE'],
          ok: NewEmail,
        }),
      },
    );

  return new Elysia().use(forUser).use(byId);
}
