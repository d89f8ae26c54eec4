import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { documented, noContent } from '../http/docs';
import { incorrectCode, invalidData, notAllowed, notFound } from '../http/errors';
import { enforce, pathUser, rejectWrongCode } from '../http/guards';
import { toUnixSeconds } from '../security/clock';
import type { UserQueries } from '../users/repository';
import { claimTotpStep, deleteTotpCredential, findTotpCredential, saveTotpCredential } from './repository';
import { RegisterTotpBody, toTotpCredentialView, TotpCredential, TWO_FACTOR_TAG, VerifyTotpBody } from './model';
import { recoveryRoutes } from './recovery-routes';
import { encodeTotpKey, matchingStep, parseTotpKey } from './codes';

function storedKey(stored: string): Uint8Array {
  const key = parseTotpKey(stored);
  if (key === undefined) throw new Error('stored TOTP key is not 20 bytes of base64');
  return key;
}

export function totpRoutes(deps: Deps, queries: UserQueries) {
  const credentialOf = (userId: string) => {
    const credential = findTotpCredential(deps.db, userId);
    if (credential === undefined) throw notFound();
    return credential;
  };

  const totp = new Elysia()
    .use(pathUser(queries.findRow))
    .post(
      '/users/:id/register-totp',
      ({ body, user }) => {
        const key = parseTotpKey(body.key ?? body.totp_key);
        if (key === undefined) throw invalidData();
        enforce(deps.limits.totpRegister.check(user.id));
        const now = deps.clock();
        const step = matchingStep(key, body.code, now);
        if (step === undefined) rejectWrongCode(deps.limits.totpRegister, user.id);
        deps.limits.totpRegister.reset(user.id);
        // The registering code's step counts as used, so that code cannot verify a login afterwards.
        const row = { userId: user.id, createdAt: toUnixSeconds(now), key: encodeTotpKey(key), lastUsedStep: step };
        if (!saveTotpCredential(deps.db, row)) throw notFound();
        return toTotpCredentialView(row);
      },
      {
        body: RegisterTotpBody,
        ...documented({
          summary: 'Register a TOTP credential',
          tag: TWO_FACTOR_TAG,
          description:
            'HMAC-SHA-1, 6 digits, 30-second steps, one step of drift either way. Replaces an existing credential. ' +
            'After 5 wrong codes within 15 minutes registration is refused for 15 minutes.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
          ok: TotpCredential,
        }),
      },
    )
    .get('/users/:id/totp-credential', ({ user }) => toTotpCredentialView(credentialOf(user.id)), {
      ...documented({ summary: "Get the user's TOTP credential", tag: TWO_FACTOR_TAG, errors: ['NOT_FOUND'], ok: TotpCredential }),
    })
    .delete(
      '/users/:id/totp-credential',
      ({ user }) => {
        if (!deleteTotpCredential(deps.db, user.id)) throw notFound();
        return noContent();
      },
      documented({ summary: "Delete the user's TOTP credential", tag: TWO_FACTOR_TAG, errors: ['NOT_FOUND'] }),
    )
    .post(
      '/users/:id/verify-2fa/totp',
      ({ body, user }) => {
        const credential = findTotpCredential(deps.db, user.id);
        if (credential === undefined) throw notAllowed();
        enforce(deps.limits.totpVerify.check(user.id));
        const step = matchingStep(storedKey(credential.key), body.code, deps.clock());
        if (step === undefined) rejectWrongCode(deps.limits.totpVerify, user.id);
        // A replayed code is not a guess at the key, so it answers INCORRECT_CODE without counting.
        if (!claimTotpStep(deps.db, user.id, step)) throw incorrectCode();
        deps.limits.totpVerify.reset(user.id);
        return noContent();
      },
      {
        body: VerifyTotpBody,
        ...documented({
          summary: 'Verify a TOTP code',
          tag: TWO_FACTOR_TAG,
          description:
            'Each time step is accepted once: a code of a step at or before the last accepted one (the registering code included) ' +
            'is INCORRECT_CODE. After 5 wrong codes within 15 minutes verification is refused for 15 minutes. No credential: NOT_ALLOWED.',
          errors: ['NOT_FOUND', 'INVALID_DATA', 'NOT_ALLOWED', 'TOO_MANY_REQUESTS', 'INCORRECT_CODE', 'PAYLOAD_TOO_LARGE'],
        }),
      },
    );

  return new Elysia().use(totp).use(recoveryRoutes(deps, queries));
}
