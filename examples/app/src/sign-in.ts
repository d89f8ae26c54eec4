import { addCookie, type App, type AppDeps, field, rawField, redirect, takeNotice } from './context';
import { form, html, page } from './html';
import { messageFor } from './messages';
import type { Session } from './session';
import { signedInState } from './session-check';

interface SignedInUser {
  id: string;
  registered_totp: boolean;
}

/**
 * After a password or an emailed code: a user with TOTP must still give a code; either way the
 * session gets a new id, since its privilege changes.
 */
export async function finishFirstFactor(deps: AppDeps, session: Session, set: { headers: Record<string, unknown> }, user: SignedInUser): Promise<Response> {
  if (user.registered_totp) {
    const next = deps.sessions.rotate(session, { pendingUserId: user.id });
    addCookie(set, deps.sessions.cookie(next));
    return redirect('/sign-in/second-factor');
  }
  return signIn(deps, session, set, user.id, 'You are signed in.');
}

/** A new signed-in session that ends with the next credential change (session-check.ts). */
export async function signIn(deps: AppDeps, session: Session, set: { headers: Record<string, unknown> }, userId: string, notice: string): Promise<Response> {
  const next = deps.sessions.rotate(session, { ...(await signedInState(deps.gatehouse, userId)), notice });
  addCookie(set, deps.sessions.cookie(next));
  return redirect('/account');
}

function signInPage(session: Session, error?: string, email = ''): Response {
  return page({ title: 'Sign in', csrf: session.csrf, signedIn: false, notice: takeNotice(session), error, scripts: ['/assets/webauthn.js', '/assets/passkeys.js'] }, html`
<section>
  <h2>With your password</h2>
  ${form('/sign-in/password', session.csrf, html`
    <label>Email <input name="email" type="email" autocomplete="username webauthn" value="${email}" required></label>
    <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
    <button id="password-sign-in">Sign in</button>`)}
  <p><a href="/reset">Forgot your password?</a></p>
</section>
<section>
  <h2>With a code by email</h2>
  ${form('/sign-in/email-code', session.csrf, html`
    <label>Email <input name="email" type="email" autocomplete="email" required></label>
    <button id="email-code-request">Email me a code</button>`)}
</section>
<section>
  <h2>With a passkey</h2>
  <button id="passkey-sign-in" type="button">Sign in with a passkey</button>
  <p class="error" id="passkey-error" role="alert" hidden></p>
</section>`);
}

export function signInRoutes(app: App, deps: AppDeps) {
  return app
    .get('/sign-in', ({ session }) => signInPage(session))
    .post('/sign-in/password', async ({ body, session, clientIp, set }) => {
      const email = field(body, 'email');
      const { data, error } = await deps.gatehouse.authenticateWithPassword({ email, password: rawField(body, 'password'), client_ip: clientIp });
      if (error) return signInPage(session, messageFor(error), email);
      return finishFirstFactor(deps, session, set, data);
    })
    .get('/sign-in/second-factor', ({ session }) => {
      if (!session.pendingUserId) return redirect('/sign-in');
      return secondFactorPage(session);
    })
    .post('/sign-in/second-factor', async ({ body, session, set }) => {
      const userId = session.pendingUserId;
      if (!userId) return redirect('/sign-in');
      const { error } = await deps.gatehouse.verifyTotp({ id: userId, code: field(body, 'code') });
      if (error) return secondFactorPage(session, messageFor(error));
      return signIn(deps, session, set, userId, 'You are signed in.');
    })
    .post('/sign-in/recovery-code', async ({ body, session, set }) => {
      const userId = session.pendingUserId;
      if (!userId) return redirect('/sign-in');
      // Using the recovery code removes the TOTP credential (it was lost) and gives a new code.
      const { data, error } = await deps.gatehouse.resetSecondFactors({ id: userId, recovery_code: field(body, 'recovery_code').toUpperCase() });
      if (error) return secondFactorPage(session, messageFor(error));
      return signIn(deps, session, set, userId, `Two-factor sign-in is now off. Your new recovery code is ${data.recovery_code}: keep it somewhere safe.`);
    })
    .post('/sign-out', ({ session, set }) => {
      deps.sessions.destroy(session);
      addCookie(set, deps.sessions.clearedCookie());
      return redirect('/');
    });
}

function secondFactorPage(session: Session, error?: string): Response {
  return page({ title: 'Two-factor sign-in', csrf: session.csrf, signedIn: false, error }, html`
${form('/sign-in/second-factor', session.csrf, html`
  <label>Code from your authenticator app <input name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required></label>
  <button id="totp-submit">Continue</button>`)}
<details>
  <summary>Lost your authenticator?</summary>
  ${form('/sign-in/recovery-code', session.csrf, html`
    <label>Recovery code <input name="recovery_code" autocomplete="off" required></label>
    <button id="recovery-submit">Use the recovery code</button>`)}
</details>`);
}
