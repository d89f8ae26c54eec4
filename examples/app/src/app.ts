import { dirname, join } from 'node:path';
import { accountRoutes } from './account';
import { apiKeyRoutes } from './api-keys';
import { type AppDeps, baseApp, takeNotice } from './context';
import { emailCodeRoutes } from './email-code';
import { isLoopback } from './client-ip';
import { errorPage, html, page } from './html';
import { passkeyRoutes } from './passkeys';
import { resetRoutes } from './reset';
import { signInRoutes } from './sign-in';
import { signUpRoutes } from './sign-up';

const PUBLIC = join(import.meta.dir, '../public');
// The package's browser build (global SimpleWebAuthnBrowser); its exports map hides the file, so it is
// found beside the package's entry point.
const WEBAUTHN_BUNDLE = join(dirname(Bun.resolveSync('@simplewebauthn/browser', import.meta.dir)), '../dist/bundle/index.umd.min.js');

export function createExampleApp(deps: AppDeps) {
  const app = baseApp(deps);
  app
    .get('/', ({ session }) => page({ title: 'Welcome', csrf: session.csrf, signedIn: Boolean(session.userId), notice: takeNotice(session) }, html`
<p>This small app keeps its own sessions and asks Gatehouse about everything else: accounts,
passwords, emailed codes, authenticator apps and passkeys.</p>
<p>${session.userId ? html`<a href="/account">Your account</a>` : html`<a href="/sign-up">Create an account</a> or <a href="/sign-in">sign in</a>.`}</p>`))
    // Every code sent, so only in development when asked for, and only to this machine: the
    // connection and (behind a proxy) the forwarded address must both be loopback.
    .get('/mailbox', ({ session, clientIp, connection }) => {
      if (!deps.devMailbox || !isLoopback(connection) || !isLoopback(clientIp)) return errorPage(404, 'There is no such page.');
      return page({ title: 'Mailbox (development)', csrf: session.csrf, signedIn: Boolean(session.userId) }, html`
<p>Every email the app sent, newest first. In production they go through your email provider.</p>
${deps.mailbox.list().map((mail) => html`<article class="mail"><p><strong>${mail.subject}</strong> to ${mail.to}, ${mail.sentAt.toISOString()}</p><p class="mail-body">${mail.body}</p></article>`)}`);
    })
    .get('/assets/style.css', () => new Response(Bun.file(join(PUBLIC, 'style.css'))))
    .get('/assets/passkeys.js', () => new Response(Bun.file(join(PUBLIC, 'passkeys.js'))))
    .get('/assets/webauthn.js', () => new Response(Bun.file(WEBAUTHN_BUNDLE)));
  signUpRoutes(app, deps);
  signInRoutes(app, deps);
  emailCodeRoutes(app, deps);
  passkeyRoutes(app, deps);
  accountRoutes(app, deps);
  apiKeyRoutes(app, deps);
  resetRoutes(app, deps);
  return app;
}
