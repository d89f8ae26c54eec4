import { Elysia } from 'elysia';
import type { Deps } from './deps';
import { httpConventions } from './http/conventions';
import { withoutValidationMessages } from './http/validation-errors';
import { createRequestHandler } from './http/handler';
import { passwordsRoutes } from './passwords/routes';
import { emailRoutes } from './email/routes';
import { totpRoutes } from './totp/routes';
import { passwordResetRoutes } from './password-reset/routes';
import { usersRoutes } from './users/routes';
import { userQueries } from './users/repository';
import { serviceRoutes } from './service/routes';
import { docsPlugin } from './docs/plugin';

export function createApp(deps: Deps, options: { docs?: boolean } = {}) {
  const queries = userQueries(deps.db);
  const app = new Elysia()
    .use(httpConventions(deps.log))
    .use(options.docs === false ? new Elysia() : docsPlugin())
    .use(serviceRoutes(deps))
    .use(usersRoutes(deps, queries))
    .use(passwordsRoutes(deps, queries))
    .use(emailRoutes(deps, queries))
    .use(totpRoutes(deps, queries))
    .use(passwordResetRoutes(deps, queries));
  return withoutValidationMessages(app);
}

export type App = ReturnType<typeof createApp>;

/** The full request path: credential, size limit and access log around the Elysia app. */
export function createHandler(deps: Deps, secret: string, app: App = createApp(deps), options: { docs?: boolean } = {}) {
  return createRequestHandler({ secret, log: deps.log, route: (request) => app.handle(request), docs: options.docs !== false });
}
