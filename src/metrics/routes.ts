import { Elysia } from 'elysia';
import { documented } from '../http/openapi';
import { MetricsText, TAG } from './model';
import type { MetricsService } from './service';

export function metricsRoutes(metrics: MetricsService) {
  return new Elysia().get(
    '/metrics',
    async () => new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } }),
    documented({
      operationId: 'getMetrics', summary: 'Metrics for Prometheus',
      tag: TAG,
      description:
        'The Prometheus text format. Needs the credential like every other path (configure it as the scrape job\'s ' +
        '`authorization` credentials with no type, or as an `Authorization` header). Off with --no-metrics, then NOT_FOUND.',
      errors: [],
      ok: MetricsText,
    }),
  );
}
