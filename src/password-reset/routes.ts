import { Elysia, t } from 'elysia';
import { requireObjectBody } from '../http/conventions';
import { presentClientIp } from '../http/fields';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import type { FindUser } from '../users/service';
import {
  CreatedPasswordResetRequest,
  CreateResetRequestBody,
  PasswordResetRequest,
  ResetPasswordBody,
  TAG,
  toResetRequestView,
  VerifyResetEmailBody,
} from './model';
import type { PasswordResetService } from './service';

export function passwordResetRoutes(resets: PasswordResetService, findUser: FindUser) {
  const ofUser = new Elysia()
    .use(pathResource('user', findUser))
    .post(
      '/users/:id/password-reset-requests',
      ({ body, user }) => resets.create(user, presentClientIp(body.client_ip)),
      {
        body: CreateResetRequestBody,
        transform: requireObjectBody,
        ...documented({
          operationId: 'createPasswordResetRequest', summary: 'Create a password reset request',
          tag: TAG,
          description:
            'Returns the request with its 8-character code, which the caller sends to the user\'s email; the code is never shown again. The request expires after 10 minutes. At most 3 per user in any 15 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'PAYLOAD_TOO_LARGE'],
          ok: CreatedPasswordResetRequest,
        }),
      },
    )
    .get(
      '/users/:id/password-reset-requests',
      ({ user }) => resets.list(user.id),
      documented({
        operationId: 'listPasswordResetRequests', summary: "List a user's password reset requests",
        tag: TAG,
        description: 'The live (unexpired, not invalidated) requests, oldest first, ties by id. Codes are not included.',
        errors: ['NOT_FOUND'],
        ok: t.Array(PasswordResetRequest),
      }),
    )
    .delete(
      '/users/:id/password-reset-requests',
      async ({ user }) => {
        await resets.invalidateAllOf(user.id);
        return noContent();
      },
      documented({ operationId: 'invalidatePasswordResetRequests', summary: "Invalidate all of a user's password reset requests", tag: TAG, errors: ['NOT_FOUND'] }),
    );

  const single = new Elysia()
    .use(pathResource('resetRequest', resets.findLive))
    .get('/password-reset-requests/:id', ({ resetRequest }) => toResetRequestView(resetRequest), {
      ...documented({
        operationId: 'getPasswordResetRequest', summary: 'Get a password reset request',
        tag: TAG,
        description: 'NOT_FOUND when the request does not exist, has expired or was invalidated. The code is not included.',
        errors: ['NOT_FOUND'],
        ok: PasswordResetRequest,
      }),
    })
    .delete(
      '/password-reset-requests/:id',
      async ({ resetRequest }) => {
        await resets.invalidate(resetRequest.id);
        return noContent();
      },
      documented({ operationId: 'invalidatePasswordResetRequest', summary: 'Invalidate a password reset request', tag: TAG, errors: ['NOT_FOUND'] }),
    )
    .post(
      '/password-reset-requests/:id/verify-email',
      async ({ body, resetRequest }) => {
        await resets.verifyEmail(resetRequest, { code: body.code, clientIp: presentClientIp(body.client_ip) });
        return noContent();
      },
      {
        body: VerifyResetEmailBody,
        ...documented({
          operationId: 'verifyPasswordResetEmail', summary: 'Verify the email of a password reset request with its code',
          tag: TAG,
          description:
            'A correct code marks the request verified (repeatable). Every wrong code counts, also after verification; the 5th answers INCORRECT_CODE and invalidates the request, after which this endpoint answers NOT_FOUND.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );

  const reset = new Elysia().post(
    '/reset-password',
    async ({ body }) => {
      await resets.resetPassword({
        requestId: body.request_id,
        password: body.password,
        clientIp: presentClientIp(body.client_ip),
      });
      return noContent();
    },
    {
      body: ResetPasswordBody,
      ...documented({
        operationId: 'resetPassword', summary: 'Reset a password with a password reset request',
        tag: TAG,
        description:
          'Works on an open or a verified request. Sets the password, marks the user\'s email verified and invalidates all of the user\'s reset requests. An unknown, expired, invalidated or used request answers INVALID_REQUEST.',
        errors: ['INVALID_DATA', 'INVALID_REQUEST', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'WEAK_PASSWORD', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
      }),
    },
  );

  return new Elysia().use(ofUser).use(single).use(reset);
}
