import { type App, type AppDeps, field, redirect } from './context';
import { form, html, page } from './html';
import { codeMessage, messageFor } from './messages';
import { randomToken, type Session } from './session';
import { finishFirstFactor } from './sign-in';

/** Sign-in with a code sent by email (Gatehouse's email sign-in requests). */
export function emailCodeRoutes(app: App, deps: AppDeps) {
  return app
    .post('/sign-in/email-code', async ({ body, session, clientIp }) => {
      const { data, error } = await deps.gatehouse.createEmailSignInRequest({ email: field(body, 'email'), client_ip: clientIp });
      if (data) {
        session.emailSignInRequestId = data.id;
        // To the address Gatehouse stored, never the one typed: a look-alike that Gatehouse matches
        // to an account (a KELVIN SIGN for a K) may be delivered somewhere else.
        const to = await storedAddress(deps, data);
        if (to) deps.mailbox.send(to, 'Your sign-in code', `Your sign-in code is ${data.code}. It expires in 10 minutes.`);
      } else if (ACCOUNT_ANSWERS.has(error.code)) {
        // The same page, the same session and the same answers to a code as for an address with an
        // account: the id of a request that does not exist is refused like a wrong code. The user's
        // own limit (3 codes in 15 minutes) would tell an account too, so it is not shown either.
        session.emailSignInRequestId = randomToken();
      } else {
        return codePage(session, messageFor(error));
      }
      return redirect('/sign-in/email-code');
    })
    .get('/sign-in/email-code', ({ session }) => codePage(session))
    .post('/sign-in/email-code/verify', async ({ body, session, clientIp, set }) => {
      const requestId = session.emailSignInRequestId;
      if (!requestId) return codePage(session, codeMessage({ code: 'INVALID_REQUEST' }));
      const { data, error } = await deps.gatehouse.authenticateWithEmailCode({ request_id: requestId, code: field(body, 'code').toUpperCase(), client_ip: clientIp });
      if (error) return codePage(session, codeMessage(error));
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

/** Answers that only an address with an account (or only one without) can get. */
const ACCOUNT_ANSWERS = new Set(['NOT_FOUND', 'USER_DISABLED', 'TOO_MANY_REQUESTS']);

/** The answer's `email` (API.md §15), or the user's stored address where the server does not send it yet. */
async function storedAddress(deps: AppDeps, request: { user_id: string; email?: string | null }): Promise<string | null | undefined> {
  if (typeof request.email === 'string') return request.email;
  return (await deps.gatehouse.getUser({ id: request.user_id })).data?.email;
}
