import { VERIFY_RESULTS, type VerifyResult } from '../api-keys/model';
import { Counter, Gauge, type Metric, Registry } from 'prom-client';
import { BREACH_ANSWER_SOURCES, type BreachAnswerSource } from '../breach-check/checker';
import type { HashingStats } from '../hashing/password-hash';
import { LIMIT_NAMES, type LimitName } from '../limits/rate-limit';
import { HOOK_OUTCOMES, type HookOutcome } from '../password-migration/model';
import { DELIVERY_OUTCOMES, type DeliveryOutcome, DURATION_BUCKETS, methodLabel, UNMATCHED_ROUTE } from './model';
import type { MetricsStore } from './store';

/**
 * The requests of one method, route and status, counted with plain increments: prom-client's own
 * inc() and observe() hash their labels on every call, which cost GET /users/{id} about 3 µs of
 * its ~70. The registry reads these at scrape time.
 */
interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per DURATION_BUCKETS bound (not cumulative); above the last one only `count` has them. */
  buckets: Float64Array;
}

const DURATIONS = 'gatehouse_http_request_duration_seconds';

/**
 * The registry of API.md §12's metrics and the functions that record them. Counts the request path
 * pays for are plain increments; what lives elsewhere (users, outbox, hash queue) is read at scrape time.
 */
export function createMetricsService({ store, hashing }: { store: MetricsStore; hashing: HashingStats }) {
  const registry = new Registry();
  const registers = [registry];

  const allSeries: RequestSeries[] = [];
  new Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
    collect() {
      this.reset();
      for (const series of allSeries) this.inc(series.labels, series.count);
    },
  });
  registry.registerMetric(requestDurations(allSeries));
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
  const hookCalls = new Counter({
    name: 'gatehouse_password_migration_hook_calls_total',
    help: 'Calls of the password migration hook by this process, by outcome: match, no_match, or why it gave no usable answer',
    labelNames: ['outcome'] as const,
    registers,
  });
  new Gauge({ name: 'gatehouse_users_awaiting_password_migration', help: 'Users imported without a password hash whose password is not taken over yet', registers, async collect() {
    this.set(await store.usersAwaitingMigration());
  } });
  // By key name (API.md §17): plain increments on the request path, read at scrape time. Bounded by
  // the names the keys file has held since the start.
  const byKey = new Map<string, { count: number }>();
  new Counter({
    name: 'gatehouse_requests_by_key_total',
    help: 'Requests that carried a known service key, by the key\'s name',
    labelNames: ['key'] as const,
    registers,
    collect() {
      this.reset();
      for (const [key, { count }] of byKey) this.inc({ key }, count);
    },
  });
  const reloadFailures = new Counter({
    name: 'gatehouse_keys_reload_failures_total',
    help: 'Reloads of the keys file that failed (the keys in force were kept)',
    registers,
  });
  reloadFailures.inc(0);
  const apiKeyVerifies = new Counter({
    name: 'gatehouse_api_key_verifications_total',
    help: 'POST /verify-api-key answers by result: valid, invalid, expired, insufficient_scope or user_disabled',
    labelNames: ['result'] as const,
    registers,
  });
  // Every bounded label value exists from the start, at zero, so rates and alerts need no special case.
  for (const limit of Object.values(LIMIT_NAMES)) limitRefusals.inc({ limit }, 0);
  for (const source of BREACH_ANSWER_SOURCES) breachAnswers.inc({ source }, 0);
  for (const outcome of DELIVERY_OUTCOMES) attempts.inc({ outcome }, 0);
  for (const outcome of HOOK_OUTCOMES) hookCalls.inc({ outcome }, 0);
  // One child a result, bound once: the verify is a hot path, and inc with labels hashes them each time.
  const verifiesBy = Object.fromEntries(VERIFY_RESULTS.map((result) => [result, apiKeyVerifies.labels({ result })])) as Record<VerifyResult, { inc(): void }>;
  for (const result of VERIFY_RESULTS) apiKeyVerifies.inc({ result }, 0);

  // route → method → status: bounded, since routes are templates and methods and statuses are few.
  const series = new Map<string, Map<string, Map<number, RequestSeries>>>();
  const seriesOf = (method: string, route: string, status: number): RequestSeries => {
    let byMethod = series.get(route);
    if (byMethod === undefined) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (found === undefined) {
      found = { labels: { method, route, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(DURATION_BUCKETS.length) };
      byStatus.set(status, found);
      allSeries.push(found);
    }
    return found;
  };

  return {
    contentType: registry.contentType,
    /** `route` is the matched template, undefined when none matched. */
    observeRequest(method: string, route: string | undefined, status: number, seconds: number): void {
      const found = seriesOf(methodLabel(method), route ?? UNMATCHED_ROUTE, status);
      found.count++;
      found.sum += seconds;
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        if (seconds <= DURATION_BUCKETS[i]!) {
          found.buckets[i]!++;
          break;
        }
      }
    },
    countKeyRequest(name: string): void {
      const found = byKey.get(name);
      if (found === undefined) byKey.set(name, { count: 1 });
      else found.count++;
    },
    countKeysReloadFailure: () => reloadFailures.inc(),
    countLimitRefusal: (limit: LimitName) => limitRefusals.inc({ limit }),
    countBreachAnswer: (source: BreachAnswerSource) => breachAnswers.inc({ source }),
    countDeliveryAttempt: (outcome: DeliveryOutcome) => attempts.inc({ outcome }),
    countMigrationHookCall: (outcome: HookOutcome) => hookCalls.inc({ outcome }),
    countApiKeyVerify: (result: VerifyResult) => verifiesBy[result].inc(),
    render: (): Promise<string> => registry.metrics(),
  };
}
export type MetricsService = ReturnType<typeof createMetricsService>;

/**
 * The request duration histogram by method and route, summed over statuses, as a metric the
 * registry renders like its own: `get()` answers what prom-client's Histogram answers (the registry
 * accepts any such object; its type names only the built-in classes, hence the cast).
 */
function requestDurations(allSeries: RequestSeries[]): Metric {
  const help = 'Time from receiving a request to its response, by method and route template';
  const metric = {
    name: DURATIONS,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset() {},
    async get() {
      const byRoute = new Map<string, { labels: { method: string; route: string }; count: number; sum: number; buckets: number[] }>();
      for (const s of allSeries) {
        const key = `${s.labels.method} ${s.labels.route}`;
        let entry = byRoute.get(key);
        if (entry === undefined) {
          entry = { labels: { method: s.labels.method, route: s.labels.route }, count: 0, sum: 0, buckets: DURATION_BUCKETS.map(() => 0) };
          byRoute.set(key, entry);
        }
        entry.count += s.count;
        entry.sum += s.sum;
        s.buckets.forEach((n, i) => (entry.buckets[i]! += n));
      }
      const values = [...byRoute.values()].flatMap(({ labels, count, sum, buckets }) => {
        let cumulative = 0;
        return [
          ...DURATION_BUCKETS.map((le, i) => ({ metricName: `${DURATIONS}_bucket`, labels: { le, ...labels }, value: (cumulative += buckets[i]!) })),
          { metricName: `${DURATIONS}_bucket`, labels: { le: '+Inf', ...labels }, value: count },
          { metricName: `${DURATIONS}_sum`, labels, value: sum },
          { metricName: `${DURATIONS}_count`, labels, value: count },
        ];
      });
      return { name: DURATIONS, help, type: 'histogram', aggregator: 'sum', values };
    },
  };
  return metric as unknown as Metric;
}
