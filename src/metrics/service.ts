import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BREACH_ANSWER_SOURCES, type BreachAnswerSource } from '../security/breach-check';
import type { HashingStats } from '../security/password-hash';
import { LIMIT_NAMES, type LimitName } from '../security/rate-limit';
import { DELIVERY_OUTCOMES, type DeliveryOutcome, DURATION_BUCKETS, methodLabel, UNMATCHED_ROUTE } from './model';
import type { MetricsStore } from './store';

/** The label objects of one method, route and status, made once: prom-client hashes them on every call. */
interface RequestSeries {
  counter: { method: string; route: string; status: string };
  histogram: { method: string; route: string };
}

/**
 * The registry of API.md §12's metrics and the functions that record them. Counts the request path
 * pays for are plain increments; what lives elsewhere (users, outbox, hash queue) is read at scrape time.
 */
export function createMetricsService({ store, hashing }: { store: MetricsStore; hashing: HashingStats }) {
  const registry = new Registry();
  const registers = [registry];

  const requests = new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const durations = new Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'Time from receiving a request to its response, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  new Gauge({ name: 'gatehouse_password_hashes_in_flight', help: 'Argon2 hashes and verifications computing now', registers, collect() {
    this.set(hashing.inFlight);
  } });
  new Gauge({ name: 'gatehouse_password_hashes_queued', help: 'Argon2 hashes and verifications waiting for a slot', registers, collect() {
    this.set(hashing.queued);
  } });
  new Counter({ name: 'gatehouse_server_busy_total', help: 'Requests refused with SERVER_BUSY (hashing queue full)', registers, collect() {
    this.reset();
    this.inc(hashing.refusals);
  } });
  const limitRefusals = new Counter({
    name: 'gatehouse_rate_limit_refusals_total',
    help: 'Refusals by each rate limit or lockout (one request refused by two limits counts in both)',
    labelNames: ['limit'] as const,
    registers,
  });
  const breachAnswers = new Counter({
    name: 'gatehouse_breach_check_answers_total',
    help: 'Breach-check answers by source: the Pwned Passwords API, the verdict cache, or the bundled list',
    labelNames: ['source'] as const,
    registers,
  });
  new Gauge({ name: 'gatehouse_users', help: 'Users stored', registers, async collect() {
    this.set(await store.usersTotal());
  } });
  new Gauge({
    name: 'gatehouse_webhook_deliveries',
    help: 'Webhook outbox rows: pending (to send or retry) and failed (given up after the retry window)',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const { pending, failed } = await store.webhookDeliveries();
      this.set({ state: 'pending' }, pending);
      this.set({ state: 'failed' }, failed);
    },
  });
  const attempts = new Counter({
    name: 'gatehouse_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by this process, by outcome: delivered, retry (scheduled again) or failed (given up)',
    labelNames: ['outcome'] as const,
    registers,
  });
  // Every bounded label value exists from the start, at zero, so rates and alerts need no special case.
  for (const limit of Object.values(LIMIT_NAMES)) limitRefusals.inc({ limit }, 0);
  for (const source of BREACH_ANSWER_SOURCES) breachAnswers.inc({ source }, 0);
  for (const outcome of DELIVERY_OUTCOMES) attempts.inc({ outcome }, 0);

  // route → method → status: bounded, since routes are templates and methods and statuses are few.
  const series = new Map<string, Map<string, Map<number, RequestSeries>>>();
  const seriesOf = (method: string, route: string, status: number): RequestSeries => {
    let byMethod = series.get(route);
    if (byMethod === undefined) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      found = { counter: { method, route, status: String(status) }, histogram: { method, route } };
      byStatus.set(status, found);
    }
    return found;
  };

  return {
    contentType: registry.contentType,
    /** `route` is the matched template, undefined when none matched. */
    observeRequest(method: string, route: string | undefined, status: number, seconds: number): void {
      const labels = seriesOf(methodLabel(method), route ?? UNMATCHED_ROUTE, status);
      requests.inc(labels.counter);
      durations.observe(labels.histogram, seconds);
    },
    countLimitRefusal: (limit: LimitName) => limitRefusals.inc({ limit }),
    countBreachAnswer: (source: BreachAnswerSource) => breachAnswers.inc({ source }),
    countDeliveryAttempt: (outcome: DeliveryOutcome) => attempts.inc({ outcome }),
    render: (): Promise<string> => registry.metrics(),
  };
}
export type MetricsService = ReturnType<typeof createMetricsService>;
