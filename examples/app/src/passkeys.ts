import { type App, type AppDeps } from './context';
import { addressConfirmed } from './account';
import { messageFor } from './messages';
import { signIn } from './sign-in';

/**
 * The JSON side of the passkey ceremonies: public/passkeys.js asks for options, runs the browser's
 * WebAuthn call through @simplewebauthn/browser, and posts the answer back. Gatehouse checks it.
 */
export function passkeyRoutes(app: App, deps: AppDeps) {
  const failed = (error: { code: string }) => Response.json({ error: messageFor(error) }, { status: 400 });
  const responseOf = (body: unknown) => (body as { response?: Record<string, unknown> } | undefined)?.response ?? {};

  return app
    .post('/account/passkeys/options', async ({ session }) => {
      if (!session.userId) return failed({ code: 'NOT_ALLOWED' });
      if (!(await addressConfirmed(deps, session.userId))) return failed({ code: 'CONFIRM_EMAIL_FIRST' });
      const { data, error } = await deps.gatehouse.createPasskeyRegistrationOptions({ id: session.userId, user_verification: 'required' });
      if (error) return failed(error);
      session.passkeyChallengeId = data.challenge_id;
      return Response.json(data.options);
    })
    .post('/account/passkeys', async ({ body, session }) => {
      const challengeId = session.passkeyChallengeId;
      if (!session.userId || !challengeId) return failed({ code: 'INVALID_REQUEST' });
      session.passkeyChallengeId = undefined;
      if (!(await addressConfirmed(deps, session.userId))) return failed({ code: 'CONFIRM_EMAIL_FIRST' });
      const { error } = await deps.gatehouse.registerPasskey({ id: session.userId, challenge_id: challengeId, response: responseOf(body) as never });
      if (error) return failed(error);
      session.notice = 'Your passkey is added.';
      return Response.json({ redirect: '/account' });
    })
    .post('/passkeys/sign-in/options', async ({ session, clientIp }) => {
      const { data, error } = await deps.gatehouse.createPasskeyAuthenticationOptions({ client_ip: clientIp });
      if (error) return failed(error);
      session.passkeyChallengeId = data.challenge_id;
      return Response.json(data.options);
    })
    .post('/passkeys/sign-in', async ({ body, session, clientIp, set }) => {
      const challengeId = session.passkeyChallengeId;
      if (!challengeId) return failed({ code: 'INVALID_REQUEST' });
      session.passkeyChallengeId = undefined;
      const { data, error } = await deps.gatehouse.authenticateWithPasskey({ challenge_id: challengeId, response: responseOf(body) as never, client_ip: clientIp });
      if (error) return failed(error);
      // A passkey with user verification is two factors in one: no TOTP step after it.
      await signIn(deps, session, set, data.id, 'You are signed in with your passkey.');
      return Response.json({ redirect: '/account' });
    });
}
