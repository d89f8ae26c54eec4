import { createApp, createHandler, createServices, type Platform } from '../../src/app';
import { openDatabase, type Db } from '../../src/db/client';
import { openPostgres, type PgDb } from '../../src/db/pg-client';
import type { Logger } from '../../src/http/log';
import { createMetricsService } from '../../src/metrics/service';
import type { BreachChecker } from '../../src/breach-check/checker';
import type { MigrationHookTarget } from '../../src/password-migration/model';
import { createPasswordMigration } from '../../src/password-migration/service';
import type { Clock } from '../../src/security/clock';
import { PasswordHasher } from '../../src/hashing/password-hash';
import { createRateLimits, type RateLimits } from '../../src/limits/rate-limit';
import { createSharedRateLimits } from '../../src/limits/rate-limit-shared';
import { RedisLink } from '../../src/limits/redis-link';
import type { RelyingParty } from '../../src/passkeys/webauthn/ceremonies';
import { postgresStores, sqliteStores, type Stores } from '../../src/stores';
import type { DeliveryTimings, WebhookTarget } from '../../src/webhooks/model';
import { startWebhookSender, type WebhookSender } from '../../src/webhooks/service';
import { SECRET } from './constants';

/** What every instance of one harness shares: the clock, the log, and how it is configured. */
export interface InstanceSettings {
  clock: Clock;
  log: Logger;
  breach: BreachChecker;
  hasher?: PasswordHasher;
  hashing?: { concurrency: number; maxQueue: number };
  metrics: boolean;
  webhook?: WebhookTarget & { timings?: DeliveryTimings };
  relyingParty: RelyingParty | null;
  /** The password migration hook (API.md §19); absent: none configured. */
  passwordMigration?: { target: MigrationHookTarget; timeoutMs?: number };
}

/** One Gatehouse as `gatehouse serve` builds it, minus the listening socket. */
export interface Instance {
  stores: Stores;
  services: ReturnType<typeof createServices>;
  app: ReturnType<typeof createApp>;
  handle: (request: Request) => Promise<Response>;
  sender: WebhookSender | null;
  /** What the limits delegate to; tests may swap it. */
  limits: RateLimits;
  close(): Promise<void>;
}

function build(settings: InstanceSettings, stores: (onOutboxWrite: () => void) => Stores, limits: RateLimits, close: () => Promise<void>): Instance {
  let sender: WebhookSender | null = null;
  const built = stores(() => sender?.wake());
  const hasher = settings.hasher ?? new PasswordHasher(settings.hashing ?? { concurrency: 4, maxQueue: 1000 });
  const metrics = settings.metrics ? createMetricsService({ store: built.metrics, hashing: hasher }) : null;
  const instance = { limits } as Instance;
  // Services keep the limits object they were given; tests swap what it delegates to.
  const swappable = new Proxy({} as RateLimits, { get: (_, name) => instance.limits[name as keyof RateLimits] });
  const migration = settings.passwordMigration;
  const passwordMigration = createPasswordMigration({
    target: migration?.target ?? null,
    timeoutMs: migration?.timeoutMs,
    clock: settings.clock,
    log: settings.log,
    onOutcome: metrics?.countMigrationHookCall,
  });
  const platform: Platform = { clock: settings.clock, breach: settings.breach, limits: swappable, hasher, log: settings.log, relyingParty: settings.relyingParty, metrics, passwordMigration };
  const services = createServices(built, platform);
  const app = createApp(services);
  if (settings.webhook !== undefined) {
    const { timings, ...target } = settings.webhook;
    sender = startWebhookSender({ store: built.webhooks, target, clock: settings.clock, log: settings.log, timings, onAttempt: metrics?.countDeliveryAttempt });
  }
  return Object.assign(instance, {
    stores: built,
    services,
    app,
    handle: createHandler(app, services, { secret: SECRET, log: settings.log }),
    sender,
    close: async () => {
      await sender?.stop();
      await close();
    },
  });
}

/** On an in-memory SQLite database with in-process limits. */
export function sqliteInstance(settings: InstanceSettings): { instance: Instance; db: Db } {
  const db = openDatabase(null);
  const outbox = settings.webhook !== undefined;
  const instance = build(settings, (onOutboxWrite) => sqliteStores(db, { webhookOutbox: outbox, onOutboxWrite }), createRateLimits(settings.clock), async () => db.$client.close());
  return { instance, db };
}

/**
 * On a PostgreSQL database and Redis shared with the other instances of the harness (API.md §10):
 * its own pool, Redis connection, hasher and per-process fallback limits, as a second process has.
 */
export async function postgresInstance(settings: InstanceSettings, engines: { databaseUrl: string; redisUrl: string; prefix: string }): Promise<{ instance: Instance; db: PgDb }> {
  const db = await openPostgres(engines.databaseUrl, { maxConnections: 3, idleTimeoutSeconds: 2 });
  const link = new RedisLink({ url: engines.redisUrl, log: settings.log });
  await link.start();
  const limits = createSharedRateLimits({ link, clock: settings.clock, local: createRateLimits(settings.clock), prefix: engines.prefix });
  const outbox = settings.webhook !== undefined;
  const instance = build(settings, (onOutboxWrite) => postgresStores(db, { webhookOutbox: outbox, onOutboxWrite }), limits, async () => {
    link.close();
    await db.$client.close();
  });
  return { instance, db };
}
