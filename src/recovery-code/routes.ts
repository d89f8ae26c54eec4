import { Elysia } from 'elysia';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import type { FindUser } from '../users/service';
import { RecoveryCodeResponse, ResetSecondFactorsBody, TAG } from './model';
import type { RecoveryCodeService } from './service';

export function recoveryCodeRoutes(recovery: RecoveryCodeService, findUser: FindUser) {
  return new Elysia()
    .use(pathResource('user', findUser))
    .post('/users/:id/regenerate-recovery-code', ({ user }) => recovery.regenerate(user), {
      ...documented({
        operationId: 'regenerateRecoveryCode', summary: 'Generate a new recovery code',
        tag: TAG,
        description: 'No body. The previous recovery code stops working. Works whether or not the user has TOTP.',
        errors: ['NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
        ok: RecoveryCodeResponse,
      }),
    })
    .post('/users/:id/reset-2fa', ({ body, user }) => recovery.resetSecondFactors(user, body.recovery_code), {
      body: ResetSecondFactorsBody,
      ...documented({
        operationId: 'resetSecondFactors', summary: 'Reset second factors with the recovery code',
        tag: TAG,
        description:
          'Deletes the TOTP credential (if any) and returns a new recovery code; the used one stops working. ' +
          'The code is case-insensitive. After 5 wrong codes within 15 minutes the endpoint is refused for 15 minutes.',
        errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
        ok: RecoveryCodeResponse,
      }),
    });
}
