import { createApp, createHandler, createServices, type Platform } from '../../src/app';
import { openDatabase } from '../../src/db/client';
import { createMetricsService } from '../../src/metrics/service';
import type { BreachChecker } from '../../src/security/breach-check';
import { PasswordHasher } from '../../src/security/password-hash';
import { createRateLimits, type RateLimits } from '../../src/security/rate-limit';
import type { RelyingParty } from '../../src/security/webauthn';
import type { Clock } from '../../src/security/clock';
import { sqliteStores } from '../../src/stores';
import type { DeliveryTimings, WebhookTarget } from '../../src/webhooks/model';
import { startWebhookSender, type WebhookSender } from '../../src/webhooks/service';

export const SECRET = 'test-secret-0123456789';
export const STRONG_PASSWORD = 'gatehouse test password 1';
export const WEAK_PASSWORD = 'password123';

/** A breach checker that knows a fixed set, so tests never touch the network. */
export const fakeBreachChecker = (breached: string[] = [WEAK_PASSWORD, 'password', '12345678']): BreachChecker => ({
  isBreached: async (password) => breached.includes(password),
});

export interface CallOptions {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
  auth?: string | null;
}

export interface HarnessOptions {
  breach?: BreachChecker;
  hashing?: { concurrency: number; maxQueue: number };
  hasher?: PasswordHasher;
  startMs?: number;
  /** Metrics are on by default, as in `gatehouse serve`. */
  metrics?: boolean;
  /** Instead of the fake clock (advance() and setNow() then do nothing). */
  clock?: Clock;
  /** Writes the webhook outbox and runs a sender to this target. */
  webhook?: WebhookTarget & { timings?: DeliveryTimings };
  /** Turns the passkey endpoints on (API.md §13). */
  relyingParty?: RelyingParty;
}

/** An in-process Gatehouse on an in-memory database with a fake clock and a captured log. */
export function createHarness(options: HarnessOptions = {}) {
  let now = options.startMs ?? Date.UTC(2026, 0, 1);
  const logs: Record<string, unknown>[] = [];
  const clock = options.clock ?? (() => now);
  const db = openDatabase(null);
  let sender: WebhookSender | null = null;
  const stores = sqliteStores(db, { webhookOutbox: options.webhook !== undefined, onOutboxWrite: () => sender?.wake() });
  const hasher = options.hasher ?? new PasswordHasher(options.hashing ?? { concurrency: 4, maxQueue: 1000 });
  const metrics = options.metrics === false ? null : createMetricsService({ store: stores.metrics, hashing: hasher });
  // Services keep the limits object they were given; tests swap what it delegates to.
  let limits = createRateLimits(clock);
  const swappableLimits = new Proxy({} as RateLimits, { get: (_, name) => limits[name as keyof RateLimits] });
  const platform: Platform = {
    clock,
    breach: options.breach ?? fakeBreachChecker(),
    limits: swappableLimits,
    hasher,
    log: (fields) => logs.push(fields),
    relyingParty: options.relyingParty ?? null,
    metrics,
  };
  const services = createServices(stores, platform);
  const app = createApp(services, { log: platform.log });
  const handle = createHandler(app, { secret: SECRET, log: platform.log, metrics });
  if (options.webhook !== undefined) {
    const { timings, ...target } = options.webhook;
    sender = startWebhookSender({ store: stores.webhooks, target, clock, log: platform.log, timings, onAttempt: metrics?.countDeliveryAttempt });
  }
  const deps = {
    db,
    clock,
    log: platform.log,
    get limits(): RateLimits {
      return limits;
    },
    set limits(fresh: RateLimits) {
      limits = fresh;
    },
  };

  async function call(method: string, path: string, opts: CallOptions = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth !== null) headers.authorization = opts.auth ?? SECRET;
    const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const response = await handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let json: any = undefined;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, headers: response.headers, json, text };
  }

  async function createUser(body: Record<string, unknown> = {}) {
    const res = await call('POST', '/users', { body: { password: STRONG_PASSWORD, ...body } });
    if (res.status !== 200) throw new Error(`createUser failed: ${res.status} ${res.text}`);
    return res.json as { id: string; recovery_code: string; email: string | null; created_at: number };
  }

  return {
    deps,
    db,
    stores,
    services,
    platform,
    app,
    handle,
    call,
    createUser,
    logs,
    sender,
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    setNow: (ms: number) => {
      now = ms;
    },
  };
}
export type Harness = ReturnType<typeof createHarness>;

export const expectError = (res: { status: number; json: any }, status: number, error: string) => {
  if (res.status !== status || res.json?.error !== error) {
    throw new Error(`expected ${status} ${error}, got ${res.status} ${JSON.stringify(res.json)}`);
  }
};
