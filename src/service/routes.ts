import { sql } from 'drizzle-orm';
import { Elysia, t } from 'elysia';
import type { Deps } from '../deps';
import { documented } from '../http/docs';
import { AppError } from '../http/errors';
import { VERSION } from '../version';

const TAG = 'Service';

export function serviceRoutes(deps: Deps) {
  return new Elysia()
    .get('/', () => ({ name: 'gatehouse', version: VERSION }), {
      ...documented({
        summary: 'Service name and version',
        tag: TAG,
        errors: [],
        ok: t.Object({ name: t.String({ examples: ['gatehouse'] }), version: t.String({ examples: [VERSION] }) }),
      }),
    })
    .get(
      '/health',
      () => {
        try {
          deps.db.get(sql`select 1`);
          return { status: 'ok' as const };
        } catch {
          throw new AppError(503, 'UNAVAILABLE');
        }
      },
      {
        ...documented({
          summary: 'Health check (no credential)',
          tag: TAG,
          description: 'Answers once the database answers.',
          public: true,
          errors: ['UNAVAILABLE'],
          ok: t.Object({ status: t.Literal('ok') }),
        }),
      },
    );
}
