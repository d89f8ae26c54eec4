import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { documented } from '../http/docs';
import { incorrectCode, notFound } from '../http/errors';
import { enforce, pathUser, rejectWrongCode } from '../http/guards';
import { KeyedSerializer } from '../security/keyed-serializer';
import { normalizeCode } from '../security/random';
import type { UserQueries } from '../users/repository';
import { newRecoveryCode } from '../users/service';
import { RecoveryCodeResponse, ResetSecondFactorsBody, TWO_FACTOR_TAG } from './model';
import { resetSecondFactors } from './repository';

export function recoveryRoutes(deps: Deps, queries: UserQueries) {
  const perUser = new KeyedSerializer();
  return new Elysia()
    .use(pathUser(queries.findRow))
    .post(
      '/users/:id/regenerate-recovery-code',
      async ({ user }) => {
        const next = await newRecoveryCode(deps);
        if (!queries.update(user.id, { recoveryCodeHash: next.hash })) throw notFound();
        return { recovery_code: next.code };
      },
      {
        ...documented({
          summary: 'Generate a new recovery code',
          tag: TWO_FACTOR_TAG,
          description: 'No body. The previous recovery code stops working. Works whether or not the user has TOTP.',
          errors: ['NOT_FOUND', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
          ok: RecoveryCodeResponse,
        }),
      },
    )
    .post(
      '/users/:id/reset-2fa',
      ({ body, user }) => perUser.run(user.id, async () => {
        enforce(deps.limits.reset2fa.check(user.id));
        // argon2 verification takes the same time whether or not the code matches.
        const verifiedHash = user.recoveryCodeHash;
        if (!(await deps.hasher.verify(normalizeCode(body.recovery_code), verifiedHash))) {
          rejectWrongCode(deps.limits.reset2fa, user.id);
        }
        deps.limits.reset2fa.reset(user.id);
        const next = await newRecoveryCode(deps);
        if (!resetSecondFactors(deps.db, user.id, verifiedHash, next.hash)) {
          // Another request redeemed or rotated this code meanwhile, or the user was deleted.
          throw queries.findRow(user.id) === undefined ? notFound() : incorrectCode();
        }
        return { recovery_code: next.code };
      }),
      {
        body: ResetSecondFactorsBody,
        ...documented({
          summary: 'Reset second factors with the recovery code',
          tag: TWO_FACTOR_TAG,
          description:
            'Deletes the TOTP credential (if any) and returns a new recovery code; the used one stops working. ' +
            'The code is case-insensitive. After 5 wrong codes within 15 minutes the endpoint is refused for 15 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE', 'SERVER_BUSY'],
          ok: RecoveryCodeResponse,
        }),
      },
    );
}
