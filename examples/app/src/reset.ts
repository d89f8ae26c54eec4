import { type App, type AppDeps, field, rawField, redirect } from './context';
import { form, html, page } from './html';
import { messageFor } from './messages';
import type { Session } from './session';

/** Forgotten password: a code by email, then a new password. */
export function resetRoutes(app: App, deps: AppDeps) {
  return app
    .get('/reset', ({ session }) => askPage(session))
    .post('/reset', async ({ body, session, clientIp }) => {
      const email = field(body, 'email');
      const { data: found, error: lookupError } = await deps.gatehouse.listUsers({ email });
      if (lookupError) return askPage(session, messageFor(lookupError));
      session.resetRequestId = undefined;
      const user = found[0];
      if (user) {
        const { data, error } = await deps.gatehouse.createPasswordResetRequest({ id: user.id, client_ip: clientIp });
        if (error) return askPage(session, messageFor(error));
        session.resetRequestId = data.id;
        deps.mailbox.send(email, 'Reset your password', `Your password reset code is ${data.code}. It expires in 10 minutes.`);
      }
      // The same page whether or not the address has an account.
      return redirect('/reset/code');
    })
    .get('/reset/code', ({ session }) => codePage(session))
    .post('/reset/code', async ({ body, session, clientIp, set }) => {
      const requestId = session.resetRequestId;
      if (!requestId) return codePage(session, messageFor({ code: 'INVALID_REQUEST' }));
      const code = field(body, 'code').toUpperCase();
      const checked = await deps.gatehouse.verifyPasswordResetEmail({ id: requestId, code, client_ip: clientIp });
      if (checked.error) return codePage(session, checked.error.code === 'NOT_FOUND' ? messageFor({ code: 'INVALID_REQUEST' }) : messageFor(checked.error));
      const { error } = await deps.gatehouse.resetPassword({ request_id: requestId, password: rawField(body, 'password'), client_ip: clientIp });
      if (error) return codePage(session, messageFor(error));
      // Whoever held this browser's session before signs in again, with the new password.
      const next = deps.sessions.rotate(session, { notice: 'Your password was changed. Please sign in.' });
      set.headers['set-cookie'] = deps.sessions.cookie(next);
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
