import { Elysia } from 'elysia';
import { apiKeysRoutes, verifyApiKeyDirectly } from './api-keys/routes';
import { createApiKeysService } from './api-keys/service';
import { emailSignInRoutes } from './email-sign-in/routes';
import { createEmailSignInService } from './email-sign-in/service';
import { emailUpdateRoutes } from './email-update/routes';
import { createEmailUpdateService } from './email-update/service';
import { emailVerificationRoutes } from './email-verification/routes';
import { createEmailVerificationService } from './email-verification/service';
import { eventsRoutes } from './events/routes';
import { createEventsService } from './events/service';
import { callerScopes } from './http/caller';
import { httpConventions } from './http/conventions';
import { docsPage } from './http/docs-page';
import { withoutValidationMessages } from './http/validation-errors';
import { createRequestHandler } from './http/handler';
import type { Logger } from './http/log';
import { routeTemplates } from './http/route-label';
import { createKeyRing, type KeyRing } from './keys/service';
import { defaultKey } from './keys/model';
import { OPERATIONS } from './keys/operations';
import { metricsRoutes } from './metrics/routes';
import type { MetricsService } from './metrics/service';
import { passkeysRoutes } from './passkeys/routes';
import { createPasskeysService } from './passkeys/service';
import { createPasswordMigration, type PasswordMigration } from './password-migration/service';
import { passwordResetRoutes } from './password-reset/routes';
import { createPasswordResetService } from './password-reset/service';
import { passwordsRoutes } from './passwords/routes';
import { createPasswordsService } from './passwords/service';
import { recoveryCodeRoutes } from './recovery-code/routes';
import { createRecoveryCodeService } from './recovery-code/service';
import type { BreachChecker } from './breach-check/checker';
import type { Clock } from './security/clock';
import type { PasswordHasher } from './hashing/password-hash';
import { countRefusals, type RateLimits } from './limits/rate-limit';
import type { RelyingParty } from './passkeys/webauthn/ceremonies';
import { statusRoutes } from './status/routes';
import { createStatusService } from './status/service';
import type { Stores } from './stores';
import { totpRoutes } from './totp/routes';
import { createTotpService } from './totp/service';
import { isLookupByEmail, lookUpByEmail, readUser, usersRoutes } from './users/routes';
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
  /** API.md §19's hook (`--password-migration-url`); absent: none, so awaiting users cannot sign in. */
  passwordMigration?: PasswordMigration;
}

export function createServices(stores: Stores, given: Platform) {
  const { metrics } = given;
  const limits = metrics === null ? given.limits : countRefusals(given.limits, metrics.countLimitRefusal);
  const platform = { ...given, limits, events: stores.events };
  return {
    status: createStatusService({ store: stores.status }),
    users: createUsersService({ ...platform, store: stores.users }),
    passwords: createPasswordsService({
      ...platform,
      store: stores.passwords,
      users: stores.users,
      migration: given.passwordMigration ?? createPasswordMigration({ target: null, clock: given.clock, log: given.log }),
    }),
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
  const operations = new Map<string, string>();
  const app = new Elysia()
    .use(httpConventions())
    .use(metrics === null ? new Elysia() : routeTemplates())
    .use(callerScopes((method, route) => operations.get(`${method} ${route}`)))
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
  for (const { method, path, hooks } of app.routes) {
    const operationId = (hooks as { detail?: { operationId?: string } }).detail?.operationId;
    if (operationId === undefined) continue;
    // A scope can name only the operations keys/operations.ts lists: a new one must be added there.
    if (OPERATIONS[operationId as keyof typeof OPERATIONS] !== method) throw new Error(`operation ${method} ${path} (${operationId}) is not in keys/operations.ts`);
    operations.set(`${method} ${path}`, operationId);
  }
  return withoutValidationMessages(app);
}
export type App = ReturnType<typeof createApp>;

/**
 * The full request path: credential, size limit, access log and request metrics around the Elysia
 * app. The credentials are the service keys in force (API.md §17), or a `secret` as the one key `default`.
 */
export function createHandler(app: App, services: Services, options: ({ keys: KeyRing } | { secret: string }) & { log: Logger; docs?: boolean }) {
  const users = services.users;
  const keys = 'keys' in options ? options.keys : createKeyRing([defaultKey(options.secret)]);
  return createRequestHandler({
    findCaller: keys.find,
    log: options.log,
    route: (request) => app.handle(request),
    // The hottest reads and the key check, answered without the router: the same code as their routes.
    directReads: [{ prefix: '/users/', template: '/users/:id', operationId: 'getUser', answer: (id) => readUser(users, id) }],
    directPosts: [verifyApiKeyDirectly(services.apiKeys)],
    directQueries: [{ path: '/users', operationId: 'listUsers', takes: isLookupByEmail, answer: (search) => lookUpByEmail(users, search) }],
    docs: options.docs !== false,
    observe: services.metrics?.observeRequest,
    observeCaller: services.metrics?.countKeyRequest,
  });
}
