import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { type App, type AppDeps, field, redirect, takeNotice } from './context';
import { form, html, page, trusted } from './html';
import { messageFor } from './messages';
import type { Session } from './session';
import { acceptOwnChange } from './session-check';
import { sendVerificationEmail } from './sign-up';

/**
 * Anyone can sign up with somebody else's address; until the address is confirmed the account may
 * belong to someone who is waiting for its owner (pre-account hijacking), so nothing that signs in
 * (a passkey, an authenticator app) can be added to it.
 */
export async function addressConfirmed(deps: AppDeps, userId: string): Promise<boolean> {
  const user = await deps.gatehouse.getUser({ id: userId });
  return user.data?.email_verified === true;
}

/** Pages for a signed-in person: the account, email confirmation, TOTP enrolment. */
export function accountRoutes(app: App, deps: AppDeps) {
  return app
    .get('/account', async ({ session }) => {
      if (!session.userId) return redirect('/sign-in');
      const [user, passkeys] = await Promise.all([deps.gatehouse.getUser({ id: session.userId }), deps.gatehouse.listPasskeys({ id: session.userId })]);
      if (user.error) return signedOut(deps, session);
      const keys = passkeys.data ?? [];
      return page({ title: 'Your account', csrf: session.csrf, signedIn: true, notice: takeNotice(session), scripts: ['/assets/webauthn.js', '/assets/passkeys.js'] }, html`
<dl>
  <dt>Email</dt><dd id="account-email">${user.data.email ?? '(none)'} ${user.data.email_verified ? html`<span id="email-verified">(confirmed)</span>` : html`(not confirmed: <a href="/verify-email">confirm it</a>)`}</dd>
  <dt>Authenticator app</dt><dd id="totp-state">${user.data.registered_totp ? 'on' : user.data.email_verified ? html`off: <a href="/account/totp">set it up</a>` : 'off'}</dd>
  <dt>Passkeys</dt><dd><ul id="passkeys">${keys.map((key) => html`<li>${key.name}</li>`)}</ul>
    ${user.data.email_verified ? html`<button id="passkey-add" type="button">Add a passkey</button>` : html`<span id="confirm-first">Confirm your email address to add a passkey or an authenticator app.</span>`}
    <span class="error" id="passkey-error" role="alert" hidden></span></dd>
  <dt>API keys</dt><dd>${user.data.email_verified ? html`<a id="api-keys-link" href="/account/api-keys">Keys for your scripts</a>` : html`<span id="api-keys-confirm-first">Confirm your email address to create API keys.</span>`}</dd>
</dl>`);
    })
    .get('/verify-email', ({ session }) => (session.userId ? verifyEmailPage(session) : redirect('/sign-in')))
    .post('/verify-email', async ({ body, session }) => {
      if (!session.userId) return redirect('/sign-in');
      const { error } = await deps.gatehouse.verifyEmail({ id: session.userId, code: field(body, 'code').toUpperCase() });
      if (error) return verifyEmailPage(session, messageFor(error));
      // This session confirmed the address: it stays signed in; any other ends (session-check.ts).
      await acceptOwnChange(deps.gatehouse, session);
      session.notice = 'Your email address is confirmed.';
      return redirect('/account');
    })
    .post('/verify-email/resend', async ({ session }) => {
      if (!session.userId) return redirect('/sign-in');
      const user = await deps.gatehouse.getUser({ id: session.userId });
      const error = user.data?.email ? await sendVerificationEmail(deps, session.userId, user.data.email) : 'There is no address to confirm.';
      return verifyEmailPage(session, error);
    })
    .get('/account/totp', async ({ session }) => {
      if (!session.userId) return redirect('/sign-in');
      const user = await deps.gatehouse.getUser({ id: session.userId });
      if (user.error) return signedOut(deps, session);
      if (!user.data.email_verified) return verifyEmailPage(session, messageFor({ code: 'CONFIRM_EMAIL_FIRST' }));
      // A new key each time the page is shown; it is stored only once a code from it checks out.
      const secret = new Secret({ size: 20 });
      session.pendingTotpKey = Buffer.from(secret.bytes).toString('base64');
      return totpPage(deps, session, secret, user.data.email ?? user.data.id);
    })
    .post('/account/totp', async ({ body, session }) => {
      if (!session.userId) return redirect('/sign-in');
      const key = session.pendingTotpKey;
      if (!key) return redirect('/account/totp');
      if (!(await addressConfirmed(deps, session.userId))) return verifyEmailPage(session, messageFor({ code: 'CONFIRM_EMAIL_FIRST' }));
      const { error } = await deps.gatehouse.registerTotp({ id: session.userId, key, code: field(body, 'code') });
      if (error) {
        const user = await deps.gatehouse.getUser({ id: session.userId });
        return totpPage(deps, session, new Secret({ buffer: Buffer.from(key, 'base64').buffer }), user.data?.email ?? session.userId, messageFor(error));
      }
      session.pendingTotpKey = undefined;
      // A fresh recovery code at the moment it starts to matter, shown once.
      const recovery = await deps.gatehouse.regenerateRecoveryCode({ id: session.userId });
      return page({ title: 'Authenticator app set up', csrf: session.csrf, signedIn: true }, html`
<p>From now on, signing in asks for a code from your authenticator app.</p>
${recovery.data ? html`<p>If you lose it, this recovery code turns two-factor sign-in off: <code id="recovery-code">${recovery.data.recovery_code}</code>. It is shown only now.</p>` : ''}
<p><a href="/account">Back to your account</a></p>`);
    });
}

function signedOut(deps: AppDeps, session: Session): Response {
  deps.sessions.destroy(session);
  return redirect('/sign-in');
}

function verifyEmailPage(session: Session, error?: string): Response {
  return page({ title: 'Confirm your email address', csrf: session.csrf, signedIn: true, error }, html`
<p>Enter the code we emailed you.</p>
${form('/verify-email', session.csrf, html`
  <label>Code <input name="code" autocomplete="one-time-code" required></label>
  <button id="verify-email-submit">Confirm</button>`)}
${form('/verify-email/resend', session.csrf, html`<button>Send a new code</button>`)}`);
}

async function totpPage(deps: AppDeps, session: Session, secret: Secret, label: string, error?: string): Promise<Response> {
  const totp = new TOTP({ issuer: deps.issuer, label, secret, algorithm: 'SHA1', digits: 6, period: 30 });
  const qr = await QRCode.toString(totp.toString(), { type: 'svg', margin: 1, width: 200 });
  return page({ title: 'Set up an authenticator app', csrf: session.csrf, signedIn: true, error }, html`
<p>Scan this code with your authenticator app, or type the key in by hand.</p>
<figure id="totp-qr">${trusted(qr)}</figure>
<p>Key: <code id="totp-key">${secret.base32}</code></p>
${form('/account/totp', session.csrf, html`
  <label>The app's current code <input name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required></label>
  <button id="totp-confirm">Turn it on</button>`)}`);
}
