import { Elysia, t } from 'elysia';
import type { Deps } from '../deps';
import { documented, noContent } from '../http/docs';
import { emailAlreadyUsed, invalidRequest, notFound } from '../http/errors';
import { enforce, pathUser } from '../http/guards';
import { nowSeconds } from '../security/clock';
import { normalizeEmail } from '../security/email-address';
import type { UserQueries } from '../users/repository';
import { assertEmailCode } from './code-check';
import { CreateEmailUpdateBody, EmailUpdateRequest, NewEmail, toUpdateView, VerifyNewEmailBody } from './model';
import {
  applyEmailUpdate,
  createUpdateRequest,
  deleteLiveUpdateRequest,
  deleteUpdateRequestsOf,
  findLiveUpdateRequest,
  liveUpdateRequestsOf,
  otherHolderOf,
  updateCounter,
} from './update-repository';

const TAG = 'Email update';

export function emailUpdateRoutes(deps: Deps, queries: UserQueries) {
  const forUser = new Elysia()
    .use(pathUser(queries.findRow))
    .post(
      '/users/:id/email-update-requests',
      ({ body, user }) => {
        const email = normalizeEmail(body.email);
        // Counted before the address check, so the endpoint cannot probe addresses faster than 3 per 15 minutes.
        enforce(deps.limits.emailUpdateRequests.hit(user.id));
        if (otherHolderOf(deps.db, email, user.id)) throw emailAlreadyUsed();
        return toUpdateView(createUpdateRequest(deps.db, user.id, email, nowSeconds(deps.clock)));
      },
      {
        body: CreateEmailUpdateBody,
        ...documented({
          summary: 'Create an email update request',
          tag: TAG,
          description:
            'Send the code to the new address. The address is stored NFC-normalised and lower-cased; the user\'s own current address is allowed. ' +
            'At most 3 creations per user in any 15 minutes (calls refused with EMAIL_ALREADY_USED count too). Expires after 10 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE'],
          ok: EmailUpdateRequest,
        }),
      },
    )
    .get('/users/:id/email-update-requests', ({ user }) => liveUpdateRequestsOf(deps.db, user.id, nowSeconds(deps.clock)).map(toUpdateView), {
      ...documented({
        summary: "List the user's live email update requests",
        tag: TAG,
        description: 'Oldest first, ties by id. Expired and invalidated requests are not listed.',
        errors: ['NOT_FOUND'],
        ok: t.Array(EmailUpdateRequest),
      }),
    })
    .delete(
      '/users/:id/email-update-requests',
      ({ user }) => {
        deleteUpdateRequestsOf(deps.db, user.id);
        return noContent();
      },
      documented({ summary: "Delete all of the user's email update requests", tag: TAG, errors: ['NOT_FOUND'] }),
    );

  const byId = new Elysia()
    .get(
      '/email-update-requests/:id',
      ({ params }) => {
        const request = findLiveUpdateRequest(deps.db, params.id, nowSeconds(deps.clock));
        if (request === undefined) throw notFound();
        return toUpdateView(request);
      },
      documented({
        summary: 'Get an email update request',
        tag: TAG,
        description: 'NOT_FOUND when it does not exist, has expired or was invalidated.',
        errors: ['NOT_FOUND'],
        ok: EmailUpdateRequest,
      }),
    )
    .delete(
      '/email-update-requests/:id',
      ({ params }) => {
        if (!deleteLiveUpdateRequest(deps.db, params.id, nowSeconds(deps.clock))) throw notFound();
        return noContent();
      },
      documented({
        summary: 'Delete an email update request',
        tag: TAG,
        description: 'NOT_FOUND when it does not exist, has expired or was invalidated.',
        errors: ['NOT_FOUND'],
      }),
    )
    .post(
      '/verify-new-email',
      ({ body }) => {
        const now = nowSeconds(deps.clock);
        const request = findLiveUpdateRequest(deps.db, body.request_id, now);
        if (request === undefined) throw invalidRequest();
        assertEmailCode(deps, {
          userId: request.userId,
          lockout: deps.limits.emailUpdateVerify,
          given: body.code,
          issued: request.code,
          rows: updateCounter,
          requestKey: request.id,
        });
        const outcome = applyEmailUpdate(deps.db, request, now);
        if (outcome === 'gone') throw invalidRequest();
        if (outcome === 'taken') throw emailAlreadyUsed();
        return { email: request.email };
      },
      {
        body: VerifyNewEmailBody,
        ...documented({
          summary: 'Confirm an email update with its code',
          tag: TAG,
          description:
            'Success sets the user\'s email to the new address, verified, and invalidates every email update request for that address ' +
            '(any user) and every password reset request of the user. Checks in order: INVALID_DATA, INVALID_REQUEST (unknown, expired ' +
            'or invalidated request), TOO_MANY_REQUESTS (5 wrong codes of this user here within 15 minutes lock this endpoint for the user ' +
            'for 15 minutes; verify-email has its own lockout; a correct code clears the count), INCORRECT_CODE (the 5th wrong code ' +
            'invalidates the request), EMAIL_ALREADY_USED (another user took the address meanwhile; the request is invalidated).',
          errors: ['INVALID_DATA', 'INVALID_REQUEST', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'EMAIL_ALREADY_USED', 'PAYLOAD_TOO_LARGE'],
          ok: NewEmail,
        }),
      },
    );

  return new Elysia().use(forUser).use(byId);
}
