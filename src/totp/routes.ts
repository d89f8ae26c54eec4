import { Elysia } from 'elysia';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import type { FindUser } from '../users/service';
import { RegisterTotpBody, TAG, TotpCredential, VerifyTotpBody } from './model';
import type { TotpService } from './service';

export function totpRoutes(totp: TotpService, findUser: FindUser) {
  return new Elysia()
    .use(pathResource('user', findUser))
    .post('/users/:id/register-totp', ({ body, user }) => totp.register(user, { key: body.key ?? body.totp_key, code: body.code }), {
      body: RegisterTotpBody,
      ...documented({
        operationId: 'registerTotp', summary: 'Register a TOTP credential',
        tag: TAG,
        description:
          'HMAC-SHA-1, 6 digits, 30-second steps, one step of drift either way. Replaces an existing credential. ' +
          'After 5 wrong codes within 15 minutes registration is refused for 15 minutes.',
        errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        ok: TotpCredential,
      }),
    })
    .get('/users/:id/totp-credential', ({ user }) => totp.get(user.id), {
      ...documented({ operationId: 'getTotpCredential', summary: "Get the user's TOTP credential", tag: TAG, errors: ['NOT_FOUND'], ok: TotpCredential }),
    })
    .delete(
      '/users/:id/totp-credential',
      async ({ user }) => {
        await totp.delete(user.id);
        return noContent();
      },
      documented({ operationId: 'deleteTotpCredential', summary: "Delete the user's TOTP credential", tag: TAG, errors: ['NOT_FOUND'] }),
    )
    .post(
      '/users/:id/verify-2fa/totp',
      async ({ body, user }) => {
        await totp.verify(user, body.code);
        return noContent();
      },
      {
        body: VerifyTotpBody,
        ...documented({
          operationId: 'verifyTotp', summary: 'Verify a TOTP code',
          tag: TAG,
          description:
            'Each time step is accepted once: a code of a step at or before the last accepted one (the registering code included) ' +
            'is INCORRECT_CODE. After 5 wrong codes within 15 minutes verification is refused for 15 minutes. No credential: NOT_ALLOWED.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );
}
