import { Elysia } from 'elysia';
import { documented } from '../http/openapi';
import { About, Health, TAG } from './model';
import type { StatusService } from './service';

export function statusRoutes(status: StatusService) {
  return new Elysia()
    .get('/', () => status.about(), {
      ...documented({ operationId: 'getServiceInfo', summary: 'Service name and version', tag: TAG, errors: [], ok: About }),
    })
    .get('/health', () => status.health(), {
      ...documented({
        operationId: 'getHealth', summary: 'Health check (no credential)',
        tag: TAG,
        description: 'Answers once the database answers.',
        public: true,
        errors: ['UNAVAILABLE'],
        ok: Health,
      }),
    });
}
