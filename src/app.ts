import { Elysia, t } from 'elysia';
import { sql } from 'drizzle-orm';
import type { Deps } from './deps';
import { httpConventions } from './http/conventions';
import { documented } from './http/docs';
import { errorResponse } from './http/errors';
import { createRequestHandler } from './http/handler';
import { passwordsRoutes } from './passwords/routes';
import { emailRoutes } from './email/routes';
import { totpRoutes } from './totp/routes';
import { passwordResetRoutes } from './password-reset/routes';
import { usersRoutes } from './users/routes';
import { userQueries } from './users/repository';
import { VERSION } from './version';
import { docsPlugin } from './docs/plugin';

export function createApp(deps: Deps, options: { docs?: boolean } = {}) {
  const queries = userQueries(deps.db);
  return new Elysia()
    .use(httpConventions(deps.log))
    .use(options.docs === false ? new Elysia() : docsPlugin())
    .get('/', () => ({ name: 'gatehouse', version: VERSION }), {
      ...documented({
        summary: 'Service name and version',
        tag: 'Service',
        errors: [],
        ok: t.Object({ name: t.String(), version: t.String() }),
      }),
    })
    .get(
      '/health',
      () => {
        try {
          deps.db.get(sql`select 1`);
          return { status: 'ok' };
        } catch {
          return errorResponse(503, 'UNAVAILABLE');
        }
      },
      {
        ...documented({
          summary: 'Health check (no credential)',
          tag: 'Service',
          public: true,
          errors: [],
          ok: t.Object({ status: t.Literal('ok') }),
        }),
      },
    )
    .use(usersRoutes(deps, queries))
    .use(passwordsRoutes(deps, queries))
    .use(emailRoutes(deps, queries))
    .use(totpRoutes(deps, queries))
    .use(passwordResetRoutes(deps, queries));
}

export type App = ReturnType<typeof createApp>;

/** The full request path: credential, size limit and access log around the Elysia app. */
export function createHandler(deps: Deps, secret: string, app: App = createApp(deps)) {
  return createRequestHandler({ secret, log: deps.log, route: (request) => app.handle(request) });
}
