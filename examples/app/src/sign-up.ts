import { addCookie, type App, type AppDeps, field, rawField } from './context';
import { form, html, page } from './html';
import { messageFor } from './messages';
import type { Session } from './session';
import { signedInState } from './session-check';

export function signUpRoutes(app: App, deps: AppDeps) {
  return app
    .get('/sign-up', ({ session }) => signUpPage(session))
    .post('/sign-up', async ({ body, session, clientIp, set }) => {
      const email = field(body, 'email');
      const { data: user, error } = await deps.gatehouse.createUser({ email, password: rawField(body, 'password'), client_ip: clientIp });
      if (error) return signUpPage(session, messageFor(error), email);
      // Signed in, but until the address is confirmed nothing can be added to the account (account.ts).
      const next = deps.sessions.rotate(session, await signedInState(deps.gatehouse, user.id));
      addCookie(set, deps.sessions.cookie(next));
      // To the address as Gatehouse stored it, never as typed.
      if (user.email) await sendVerificationEmail(deps, user.id, user.email);
      // Gatehouse shows the recovery code once, in this answer: the person must see it now.
      return page({ title: 'Welcome', csrf: next.csrf, signedIn: true }, html`
<p>Your account is ready. We have emailed you a code to confirm your address.</p>
<p>Your recovery code, for when you lose your authenticator app: <code id="recovery-code">${user.recovery_code}</code>.
Write it down; it is not shown again.</p>
<p><a href="/verify-email">Confirm your email address</a></p>`);
    });
}

export async function sendVerificationEmail(deps: AppDeps, userId: string, email: string): Promise<string | undefined> {
  const { data, error } = await deps.gatehouse.createEmailVerificationRequest({ id: userId });
  if (error) return messageFor(error);
  deps.mailbox.send(email, 'Confirm your email address', `Your confirmation code is ${data.code}. It expires in 10 minutes.`);
  return undefined;
}

function signUpPage(session: Session, error?: string, email = ''): Response {
  return page({ title: 'Sign up', csrf: session.csrf, signedIn: false, error }, form('/sign-up', session.csrf, html`
  <label>Email <input name="email" type="email" autocomplete="email" value="${email}" required></label>
  <label>Password <input name="password" type="password" autocomplete="new-password" minlength="8" maxlength="127" required></label>
  <button id="sign-up">Create account</button>`));
}
