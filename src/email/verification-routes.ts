import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { documented, noContent } from '../http/docs';
import { notAllowed, notFound } from '../http/errors';
import { enforce, pathUser } from '../http/guards';
import { nowSeconds } from '../security/clock';
import type { UserQueries } from '../users/repository';
import { assertEmailCode } from './code-check';
import { EmailVerificationRequest, toVerificationView, VerifyEmailBody } from './model';
import {
  deleteLiveVerification,
  findLiveVerification,
  redeemVerification,
  replaceVerification,
  verificationCounter,
} from './verification-repository';

const TAG = 'Email verification';

export function emailVerificationRoutes(deps: Deps, queries: UserQueries) {
  return new Elysia()
    .use(pathUser(queries.findRow))
    .post(
      '/users/:id/email-verification-request',
      ({ user }) => {
        enforce(deps.limits.emailVerificationRequests.hit(user.id));
        return toVerificationView(replaceVerification(deps.db, user.id, nowSeconds(deps.clock)));
      },
      documented({
        summary: 'Create an email verification request',
        tag: TAG,
        description:
          'No body. Replaces any pending request with a new code and a new 10-minute expiry. Send the code to the user\'s address. ' +
          'At most 3 creations per user in any 15 minutes. Allowed for a user without an email or already verified.',
        errors: ['NOT_FOUND', 'TOO_MANY_REQUESTS', 'PAYLOAD_TOO_LARGE'],
        ok: EmailVerificationRequest,
      }),
    )
    .get(
      '/users/:id/email-verification-request',
      ({ user }) => {
        const pending = findLiveVerification(deps.db, user.id, nowSeconds(deps.clock));
        if (pending === undefined) throw notFound();
        return toVerificationView(pending);
      },
      documented({
        summary: "Get the user's pending email verification request",
        tag: TAG,
        description: 'NOT_FOUND when the user does not exist or has no pending (unexpired) request.',
        errors: ['NOT_FOUND'],
        ok: EmailVerificationRequest,
      }),
    )
    .delete(
      '/users/:id/email-verification-request',
      ({ user }) => {
        if (!deleteLiveVerification(deps.db, user.id, nowSeconds(deps.clock))) throw notFound();
        return noContent();
      },
      documented({
        summary: "Delete the user's pending email verification request",
        tag: TAG,
        description: 'NOT_FOUND when the user does not exist or has no pending (unexpired) request.',
        errors: ['NOT_FOUND'],
      }),
    )
    .post(
      '/users/:id/verify-email',
      ({ body, user }) => {
        const now = nowSeconds(deps.clock);
        const pending = findLiveVerification(deps.db, user.id, now);
        if (pending === undefined) throw notAllowed();
        assertEmailCode(deps, {
          userId: user.id,
          lockout: deps.limits.emailVerify,
          given: body.code,
          issued: pending.code,
          rows: verificationCounter,
          requestKey: user.id,
        });
        if (!redeemVerification(deps.db, pending, now)) throw notAllowed();
        return noContent();
      },
      {
        body: VerifyEmailBody,
        ...documented({
          summary: "Verify the user's email with the code of the pending request",
          tag: TAG,
          description:
            'Success marks the email verified and deletes the request. Checks in order: NOT_FOUND, INVALID_DATA (code format; no attempt counted), ' +
            'NOT_ALLOWED (no pending request), TOO_MANY_REQUESTS (5 wrong codes of this user here within 15 minutes lock this endpoint for the user for 15 minutes; ' +
            'POST /verify-new-email has its own lockout; a correct code clears the count), INCORRECT_CODE (the 5th wrong code for a request deletes it).',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );
}
