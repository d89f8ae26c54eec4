import { type App, type AppDeps, field, redirect } from './context';
import { form, html, page } from './html';
import { messageFor } from './messages';
import type { Session } from './session';
import { finishFirstFactor } from './sign-in';

/** Sign-in with a code sent by email (Gatehouse's email sign-in requests). */
export function emailCodeRoutes(app: App, deps: AppDeps) {
  return app
    .post('/sign-in/email-code', async ({ body, session, clientIp }) => {
      const email = field(body, 'email');
      const { data, error } = await deps.gatehouse.createEmailSignInRequest({ email, client_ip: clientIp });
      if (data) {
        session.emailSignInRequestId = data.id;
        deps.mailbox.send(email, 'Your sign-in code', `Your sign-in code is ${data.code}. It expires in 10 minutes.`);
      } else if (error.code === 'NOT_FOUND') {
        // The same page as for a known address: the form must not tell who has an account.
        session.emailSignInRequestId = undefined;
      } else {
        return codePage(session, messageFor(error));
      }
      return redirect('/sign-in/email-code');
    })
    .get('/sign-in/email-code', ({ session }) => codePage(session))
    .post('/sign-in/email-code/verify', async ({ body, session, clientIp, set }) => {
      const requestId = session.emailSignInRequestId;
      if (!requestId) return codePage(session, messageFor({ code: 'INVALID_REQUEST' }));
      const { data, error } = await deps.gatehouse.authenticateWithEmailCode({ request_id: requestId, code: field(body, 'code').toUpperCase(), client_ip: clientIp });
      if (error) return codePage(session, messageFor(error));
      session.emailSignInRequestId = undefined;
      return finishFirstFactor(deps, session, set, data);
    });
}

function codePage(session: Session, error?: string): Response {
  return page({ title: 'Enter your code', csrf: session.csrf, signedIn: false, error }, html`
<p>If an account uses that address, we have emailed it a code.</p>
${form('/sign-in/email-code/verify', session.csrf, html`
  <label>Code <input name="code" autocomplete="one-time-code" required></label>
  <button id="email-code-submit">Sign in</button>`)}
<p><a href="/sign-in">Back</a></p>`);
}
