import { Elysia } from 'elysia';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import type { FindUser } from '../users/service';
import { EmailVerificationRequest, TAG, VerifyEmailBody } from './model';
import type { EmailVerificationService } from './service';

export function emailVerificationRoutes(verification: EmailVerificationService, findUser: FindUser) {
  return new Elysia()
    .use(pathResource('user', findUser))
    .post(
      '/users/:id/email-verification-request',
      ({ user }) => verification.create(user),
      documented({
        operationId: 'createEmailVerificationRequest', summary: 'Create an email verification request',
        tag: TAG,
        description:
          'No body. Replaces any pending request with a new code and a new 10-minute expiry. Send the code to the user\'s address. ' +
          'At most 3 creations per user in any 15 minutes. Allowed for a user without an email or already verified.',
        errors: ['NOT_FOUND', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'PAYLOAD_TOO_LARGE'],
        ok: EmailVerificationRequest,
      }),
    )
    .get(
      '/users/:id/email-verification-request',
      ({ user }) => verification.get(user.id),
      documented({
        operationId: 'getEmailVerificationRequest', summary: "Get the user's pending email verification request",
        tag: TAG,
        description: 'NOT_FOUND when the user does not exist or has no pending (unexpired) request.',
        errors: ['NOT_FOUND'],
        ok: EmailVerificationRequest,
      }),
    )
    .delete(
      '/users/:id/email-verification-request',
      async ({ user }) => {
        await verification.delete(user.id);
        return noContent();
      },
      documented({
        operationId: 'deleteEmailVerificationRequest', summary: "Delete the user's pending email verification request",
        tag: TAG,
        description: 'NOT_FOUND when the user does not exist or has no pending (unexpired) request.',
        errors: ['NOT_FOUND'],
      }),
    )
    .post(
      '/users/:id/verify-email',
      async ({ body, user }) => {
        await verification.verify(user, body.code);
        return noContent();
      },
      {
        body: VerifyEmailBody,
        ...documented({
          operationId: 'verifyEmail', summary: "Verify the user's email with the code of the pending request",
          tag: TAG,
          description:
            'Success marks the email verified and deletes the request. Checks in order: NOT_FOUND, INVALID_DATA (code format; no attempt counted), ' +
            'NOT_ALLOWED (no pending request), TOO_MANY_REQUESTS (5 wrong codes of this user here within 15 minutes lock this endpoint for the user for 15 minutes; ' +
            'POST /verify-new-email has its own lockout; a correct code clears the count), INCORRECT_CODE (the 5th wrong code for a request deletes it).',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );
}
