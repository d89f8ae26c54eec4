import { Elysia, t } from 'elysia';
import { AppError } from '../errors';
import { requireObjectBody } from '../http/conventions';
import { presentClientIp } from '../http/fields';
import { documented } from '../http/openapi';
import { pathResource } from '../http/path-resource';
import { noContent } from '../http/responses';
import { User } from '../users/model';
import type { FindUser } from '../users/service';
import {
  AuthenticatePasskeyBody,
  AuthenticationOptions,
  AuthenticationOptionsBody,
  Passkey,
  RegisterPasskeyBody,
  RegistrationOptions,
  RegistrationOptionsBody,
  RenamePasskeyBody,
  TAG,
  VerifyPasskeyBody,
} from './model';
import type { PasskeysService } from './service';

const UNCONFIGURED = 'Without a configured RP id (--webauthn-rp-id) every passkey endpoint answers NOT_ALLOWED.';

export function passkeysRoutes(passkeys: PasskeysService, findUser: FindUser) {
  const login = new Elysia()
    .post(
      '/passkey-authentication-options',
      ({ body }) =>
        passkeys.authenticationOptions({ userId: body.user_id ?? null, purpose: body.purpose ?? 'login', clientIp: presentClientIp(body.client_ip) }),
      {
        body: AuthenticationOptionsBody,
        transform: requireObjectBody,
        ...documented({
          operationId: 'createPasskeyAuthenticationOptions', summary: 'Start a passkey login or second factor',
          tag: TAG,
          description:
            'Returns `PublicKeyCredentialRequestOptionsJSON` for `navigator.credentials.get()` and the challenge_id to send back. ' +
            'Without user_id any discoverable passkey may answer; with it, only that user\'s (NOT_ALLOWED when the user has none). ' +
            `The challenge is single use and lives 5 minutes. ${UNCONFIGURED}`,
          errors: ['INVALID_DATA', 'NOT_FOUND', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'PAYLOAD_TOO_LARGE'],
          ok: AuthenticationOptions,
        }),
      },
    )
    .post(
      '/authenticate/passkey',
      ({ body }) => passkeys.authenticate({ challengeId: body.challenge_id, response: body.response, clientIp: presentClientIp(body.client_ip) }),
      {
        body: AuthenticatePasskeyBody,
        ...documented({
          operationId: 'authenticateWithPasskey', summary: 'Log in with a passkey',
          tag: TAG,
          description:
            'Answers the passkey\'s owner. The first verify uses the challenge up, successful or not: an unknown, expired, used or ' +
            'second-factor challenge is INVALID_REQUEST. Failures count toward the login block of client_ip like wrong passwords. ' +
            'A sign counter that does not increase (when it or the stored one is non-zero) is refused as a possible clone. ' +
            'A correct passkey of a disabled user answers USER_DISABLED and leaves the challenge unused.',
          errors: ['INVALID_DATA', 'NOT_ALLOWED', 'INVALID_REQUEST', 'TOO_MANY_REQUESTS', 'PASSKEY_VERIFICATION_FAILED', 'USER_DISABLED', 'PAYLOAD_TOO_LARGE'],
          ok: User,
        }),
      },
    );

  const forUser = new Elysia()
    .use(pathResource('user', findUser))
    .post('/users/:id/passkey-registration-options', ({ body, user }) => passkeys.registrationOptions(user, body.user_verification), {
      body: RegistrationOptionsBody,
      transform: requireObjectBody,
      ...documented({
        operationId: 'createPasskeyRegistrationOptions', summary: 'Start registering a passkey',
        tag: TAG,
        description:
          'Returns `PublicKeyCredentialCreationOptionsJSON` for `navigator.credentials.create()` (excluding the user\'s passkeys) and the ' +
          `challenge_id to send back. At most 10 passkeys per user: NOT_ALLOWED beyond. ${UNCONFIGURED}`,
        errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED', 'PAYLOAD_TOO_LARGE'],
        ok: RegistrationOptions,
      }),
    })
    .post(
      '/users/:id/passkeys',
      ({ body, user }) => passkeys.register(user, { challengeId: body.challenge_id, response: body.response, name: body.name }),
      {
        body: RegisterPasskeyBody,
        ...documented({
          operationId: 'registerPasskey', summary: 'Register a passkey',
          tag: TAG,
          description:
            'Verifies the browser\'s answer (attestation none) and stores the passkey. Without a name it is named after its provider ' +
            '(from the AAGUID) or "Passkey". The first verify uses the challenge up, successful or not.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED', 'INVALID_REQUEST', 'PASSKEY_VERIFICATION_FAILED', 'PASSKEY_ALREADY_REGISTERED', 'PAYLOAD_TOO_LARGE'],
          ok: Passkey,
        }),
      },
    )
    .get('/users/:id/passkeys', ({ user }) => passkeys.list(user.id), {
      ...documented({ operationId: 'listPasskeys', summary: "List the user's passkeys", tag: TAG, description: 'Oldest first.', errors: ['NOT_FOUND', 'NOT_ALLOWED'], ok: t.Array(Passkey) }),
    })
    .post(
      '/users/:id/verify-2fa/passkey',
      async ({ body, user }) => {
        await passkeys.verifySecondFactor(user, { challengeId: body.challenge_id, response: body.response });
        return noContent();
      },
      {
        body: VerifyPasskeyBody,
        ...documented({
          operationId: 'verifyPasskey', summary: 'Verify a passkey as the second factor',
          tag: TAG,
          description:
            'For a user who logged in with a password, with a challenge from POST /passkey-authentication-options with this user_id and ' +
            'purpose second_factor. After 5 failures within 15 minutes verification is refused for 15 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'USER_DISABLED', 'NOT_ALLOWED', 'INVALID_REQUEST', 'TOO_MANY_REQUESTS', 'PASSKEY_VERIFICATION_FAILED', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );

  // Both path ids are checked in the transform phase, so a missing passkey is 404 before a bad body (API.md §1).
  const onePasskey = new Elysia()
    .use(pathResource('user', findUser))
    .derive({ as: 'scoped' }, async ({ params }) => {
      const { id, passkey_id: passkeyId } = params as Record<string, string | undefined>;
      const passkey = id === undefined || passkeyId === undefined ? undefined : await passkeys.find(id, passkeyId);
      if (passkey === undefined) throw new AppError('NOT_FOUND');
      return { passkey };
    })
    .patch('/users/:id/passkeys/:passkey_id', ({ body, passkey }) => passkeys.rename(passkey.userId, passkey.id, body.name), {
      body: RenamePasskeyBody,
      ...documented({ operationId: 'renamePasskey', summary: 'Rename a passkey', tag: TAG, errors: ['NOT_FOUND', 'INVALID_DATA', 'NOT_ALLOWED', 'PAYLOAD_TOO_LARGE'], ok: Passkey }),
    })
    .delete(
      '/users/:id/passkeys/:passkey_id',
      async ({ passkey }) => {
        await passkeys.delete(passkey.userId, passkey.id);
        return noContent();
      },
      documented({ operationId: 'deletePasskey', summary: 'Delete a passkey', tag: TAG, description: 'It can no longer log in or verify.', errors: ['NOT_FOUND', 'NOT_ALLOWED'] }),
    );

  return new Elysia().use(login).use(forUser).use(onePasskey);
}
