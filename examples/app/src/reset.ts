import { addCookie, type App, type AppDeps, field, rawField, redirect } from './context';
import { form, html, page } from './html';
import { codeMessage, messageFor } from './messages';
import { randomToken, type Session } from './session';

/** Forgotten password: a code by email, then a new password. */
export function resetRoutes(app: App, deps: AppDeps) {
  return app
    .get('/reset', ({ session }) => askPage(session))
    .post('/reset', async ({ body, session, clientIp }) => {
      const { data: found, error: lookupError } = await deps.gatehouse.listUsers({ email: field(body, 'email') });
      if (lookupError) return askPage(session, messageFor(lookupError));
      const user = found[0];
      // Whatever happens next, the session holds a request id and the page is the same: an
      // unknown address, a disabled account or one over its limit are not told apart from the rest.
      session.resetRequestId = randomToken();
      session.resetUserId = undefined;
      if (user?.email) {
        const { data } = await deps.gatehouse.createPasswordResetRequest({ id: user.id, client_ip: clientIp });
        if (data) {
          session.resetRequestId = data.id;
          session.resetUserId = user.id;
          // To the address Gatehouse stored, never the one typed (a look-alike may be matched to it).
          deps.mailbox.send(user.email, 'Reset your password', `Your password reset code is ${data.code}. It expires in 10 minutes.`);
        }
      }
      return redirect('/reset/code');
    })
    .get('/reset/code', ({ session }) => codePage(session))
    .post('/reset/code', async ({ body, session, clientIp, set }) => {
      const requestId = session.resetRequestId;
      if (!requestId) return codePage(session, codeMessage({ code: 'INVALID_REQUEST' }));
      const code = field(body, 'code').toUpperCase();
      const checked = await deps.gatehouse.verifyPasswordResetEmail({ id: requestId, code, client_ip: clientIp });
      if (checked.error) return codePage(session, codeMessage(checked.error));
      const { error } = await deps.gatehouse.resetPassword({ request_id: requestId, password: rawField(body, 'password'), client_ip: clientIp });
      if (error) return codePage(session, messageFor(error));
      // Every session of the user ends now (others would anyway within a minute, session-check.ts),
      // and whoever held this browser's session before signs in again, with the new password.
      if (session.resetUserId) deps.sessions.destroyUser(session.resetUserId);
      const next = deps.sessions.rotate(session, { notice: 'Your password was changed. Please sign in.' });
      addCookie(set, deps.sessions.cookie(next));
      return redirect('/sign-in');
    });
}

function askPage(session: Session, error?: string): Response {
  return page({ title: 'Forgot your password?', csrf: session.csrf, signedIn: Boolean(session.userId), error }, form('/reset', session.csrf, html`
  <label>Email <input name="email" type="email" autocomplete="email" required></label>
  <button id="reset-request">Email me a code</button>`));
}

function codePage(session: Session, error?: string): Response {
  return page({ title: 'Choose a new password', csrf: session.csrf, signedIn: Boolean(session.userId), error }, html`
<p>If an account uses that address, we have emailed it a code.</p>
${form('/reset/code', session.csrf, html`
  <label>Code <input name="code" autocomplete="one-time-code" required></label>
  <label>New password <input name="password" type="password" autocomplete="new-password" minlength="8" maxlength="127" required></label>
  <button id="reset-submit">Set the new password</button>`)}`);
}
