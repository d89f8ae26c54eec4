import { Elysia } from 'elysia';
import { emailUpdateRoutes } from './email-update/routes';
import { createEmailUpdateService } from './email-update/service';
import { emailVerificationRoutes } from './email-verification/routes';
import { createEmailVerificationService } from './email-verification/service';
import { httpConventions } from './http/conventions';
import { docsPage } from './http/docs-page';
import { withoutValidationMessages } from './http/validation-errors';
import { createRequestHandler } from './http/handler';
import type { Logger } from './http/log';
import { passkeysRoutes } from './passkeys/routes';
import { createPasskeysService } from './passkeys/service';
import { passwordResetRoutes } from './password-reset/routes';
import { createPasswordResetService } from './password-reset/service';
import { passwordsRoutes } from './passwords/routes';
import { createPasswordsService } from './passwords/service';
import { recoveryCodeRoutes } from './recovery-code/routes';
import { createRecoveryCodeService } from './recovery-code/service';
import type { BreachChecker } from './security/breach-check';
import type { Clock } from './security/clock';
import type { PasswordHasher } from './security/password-hash';
import type { RateLimits } from './security/rate-limit';
import type { RelyingParty } from './security/webauthn';
import { statusRoutes } from './status/routes';
import { createStatusService } from './status/service';
import type { Stores } from './stores';
import { totpRoutes } from './totp/routes';
import { createTotpService } from './totp/service';
import { usersRoutes } from './users/routes';
import { createUsersService } from './users/service';

/** What the services need from outside storage; tests pass a fake clock and breach checker. */
export interface Platform {
  clock: Clock;
  breach: BreachChecker;
  limits: RateLimits;
  hasher: PasswordHasher;
  log: Logger;
  /** The WebAuthn relying party (API.md §13); absent or null turns the passkey endpoints off. */
  relyingParty?: RelyingParty | null;
}

export function createServices(stores: Stores, platform: Platform) {
  return {
    status: createStatusService({ store: stores.status }),
    users: createUsersService({ ...platform, store: stores.users }),
    passwords: createPasswordsService({ ...platform, store: stores.passwords, users: stores.users }),
    emailVerification: createEmailVerificationService({ ...platform, store: stores.emailVerification }),
    emailUpdate: createEmailUpdateService({ ...platform, store: stores.emailUpdate }),
    totp: createTotpService({ ...platform, store: stores.totp }),
    recoveryCode: createRecoveryCodeService({ ...platform, store: stores.recoveryCode }),
    passwordReset: createPasswordResetService({ ...platform, store: stores.passwordReset }),
    passkeys: createPasskeysService({ ...platform, store: stores.passkeys, users: stores.users, relyingParty: platform.relyingParty ?? null }),
  };
}
export type Services = ReturnType<typeof createServices>;

export function createApp(services: Services, options: { log: Logger; docs?: boolean }) {
  const findUser = services.users.find;
  const app = new Elysia()
    .use(httpConventions(options.log))
    .use(options.docs === false ? new Elysia() : docsPage())
    .use(statusRoutes(services.status))
    .use(usersRoutes(services.users))
    .use(passwordsRoutes(services.passwords, findUser))
    .use(emailVerificationRoutes(services.emailVerification, findUser))
    .use(emailUpdateRoutes(services.emailUpdate, findUser))
    .use(totpRoutes(services.totp, findUser))
    .use(recoveryCodeRoutes(services.recoveryCode, findUser))
    .use(passwordResetRoutes(services.passwordReset, findUser))
    .use(passkeysRoutes(services.passkeys, findUser));
  return withoutValidationMessages(app);
}
export type App = ReturnType<typeof createApp>;

/** The full request path: credential, size limit and access log around the Elysia app. */
export function createHandler(app: App, options: { secret: string; log: Logger; docs?: boolean }) {
  return createRequestHandler({ secret: options.secret, log: options.log, route: (request) => app.handle(request), docs: options.docs !== false });
}
