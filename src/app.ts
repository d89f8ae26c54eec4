import { Elysia } from 'elysia';
import { apiKeysRoutes } from './api-keys/routes';
import { createApiKeysService } from './api-keys/service';
import { emailSignInRoutes } from './email-sign-in/routes';
import { createEmailSignInService } from './email-sign-in/service';
import { emailUpdateRoutes } from './email-update/routes';
import { createEmailUpdateService } from './email-update/service';
import { emailVerificationRoutes } from './email-verification/routes';
import { createEmailVerificationService } from './email-verification/service';
import { eventsRoutes } from './events/routes';
import { createEventsService } from './events/service';
import { httpConventions } from './http/conventions';
import { docsPage } from './http/docs-page';
import { withoutValidationMessages } from './http/validation-errors';
import { createRequestHandler } from './http/handler';
import type { Logger } from './http/log';
import { routeTemplates } from './http/route-label';
import { metricsRoutes } from './metrics/routes';
import type { MetricsService } from './metrics/service';
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
import { countRefusals, type RateLimits } from './security/rate-limit';
import type { RelyingParty } from './security/webauthn';
import { statusRoutes } from './status/routes';
import { createStatusService } from './status/service';
import type { Stores } from './stores';
import { totpRoutes } from './totp/routes';
import { createTotpService } from './totp/service';
import { readUser, usersRoutes } from './users/routes';
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
  /** Null with --no-metrics. */
  metrics: MetricsService | null;
}

export function createServices(stores: Stores, given: Platform) {
  const { metrics } = given;
  const limits = metrics === null ? given.limits : countRefusals(given.limits, metrics.countLimitRefusal);
  const platform = { ...given, limits, events: stores.events };
  return {
    status: createStatusService({ store: stores.status }),
    users: createUsersService({ ...platform, store: stores.users }),
    passwords: createPasswordsService({ ...platform, store: stores.passwords, users: stores.users }),
    emailVerification: createEmailVerificationService({ ...platform, store: stores.emailVerification }),
    emailUpdate: createEmailUpdateService({ ...platform, store: stores.emailUpdate, users: stores.users }),
    emailSignIn: createEmailSignInService({ ...platform, store: stores.emailSignIn, users: stores.users }),
    totp: createTotpService({ ...platform, store: stores.totp }),
    recoveryCode: createRecoveryCodeService({ ...platform, store: stores.recoveryCode }),
    passwordReset: createPasswordResetService({ ...platform, store: stores.passwordReset, users: stores.users }),
    passkeys: createPasskeysService({ ...platform, store: stores.passkeys, users: stores.users, relyingParty: platform.relyingParty ?? null }),
    apiKeys: createApiKeysService({ store: stores.apiKeys, clock: platform.clock, countVerify: metrics?.countApiKeyVerify }),
    events: createEventsService({ store: stores.events }),
    metrics,
  };
}
export type Services = ReturnType<typeof createServices>;

export function createApp(services: Services, options: { docs?: boolean } = {}) {
  const findUser = services.users.find;
  const metrics = services.metrics;
  const app = new Elysia()
    .use(httpConventions())
    .use(metrics === null ? new Elysia() : routeTemplates())
    .use(options.docs === false ? new Elysia() : docsPage())
    .use(statusRoutes(services.status))
    .use(usersRoutes(services.users))
    .use(passwordsRoutes(services.passwords, findUser))
    .use(emailVerificationRoutes(services.emailVerification, findUser))
    .use(emailUpdateRoutes(services.emailUpdate, findUser))
    .use(totpRoutes(services.totp, findUser))
    .use(recoveryCodeRoutes(services.recoveryCode, findUser))
    .use(passwordResetRoutes(services.passwordReset, findUser))
    .use(emailSignInRoutes(services.emailSignIn, findUser))
    .use(passkeysRoutes(services.passkeys, findUser))
    .use(apiKeysRoutes(services.apiKeys, findUser))
    .use(eventsRoutes(services.events))
    .use(metrics === null ? new Elysia() : metricsRoutes(metrics));
  return withoutValidationMessages(app);
}
export type App = ReturnType<typeof createApp>;

/** The full request path: credential, size limit, access log and request metrics around the Elysia app. */
export function createHandler(app: App, services: Services, options: { secret: string; log: Logger; docs?: boolean }) {
  const users = services.users;
  return createRequestHandler({
    secret: options.secret,
    log: options.log,
    route: (request) => app.handle(request),
    // The hottest read, answered without the router: the same readUser as its route.
    directReads: [{ prefix: '/users/', template: '/users/:id', answer: (id) => readUser(users, id) }],
    docs: options.docs !== false,
    observe: services.metrics?.observeRequest,
  });
}
