import { createApp, createHandler, createServices, type Platform } from '../app';
import { startSweeper } from '../code-requests/service';
import { startEventSweeper } from '../events/service';
import { escapedFailure } from '../http/conventions';
import { type Logger, stdoutLogger } from '../http/log';
import { createMetricsService, type MetricsService } from '../metrics/service';
import { createBreachChecker } from '../breach-check/checker';
import { createPasswordMigration } from '../password-migration/service';
import { systemClock } from '../security/clock';
import { PasswordHasher } from '../hashing/password-hash';
import type { RateLimits } from '../limits/rate-limit';
import { scaledTimings } from '../webhooks/model';
import { startWebhookSender, type WebhookSender } from '../webhooks/service';
import { createKeyRing, watchKeysFile } from '../keys/service';
import type { ServeConfig } from './config';
import { loadKeysFile } from './keys';
import { resolveKeys } from './secret';
import { openLimits, openStorage } from './storage';

/** Argon2 runs on Bun's thread pool; a few more than the cores keeps them busy while others wait on I/O. */
const HASHING_LIMITS = { concurrency: 4, maxQueue: 512 };

function buildPlatform(config: ServeConfig, log: Logger, hasher: PasswordHasher, metrics: MetricsService | null, limits: RateLimits): Platform {
  const clock = systemClock;
  return {
    clock,
    breach: createBreachChecker({
      mode: config.pwnedCheck,
      apiBaseUrl: config.pwnedApiUrl,
      log: (message) => log({ level: 'warn', message }),
      onAnswer: metrics?.countBreachAnswer,
    }),
    limits,
    hasher,
    log,
    metrics,
    relyingParty: config.relyingParty,
    passwordMigration: createPasswordMigration({ target: config.passwordMigration, clock, log, onOutcome: metrics?.countMigrationHookCall }),
  };
}

/** Starts serving and resolves to a `stop` that drains requests in flight and closes the database. */
export async function serve(config: ServeConfig, log: Logger = stdoutLogger) {
  // Before anything is opened or created: a refused secret or keys file stops start-up with nothing written.
  const { keys: startingKeys, origin } = resolveKeys(config);
  if (origin !== null) log({ level: 'info', message: origin });
  const keys = createKeyRing(startingKeys);
  const hasher = new PasswordHasher(HASHING_LIMITS);
  let sender: WebhookSender | null = null;
  // Events of this process wake the sender at once; rows of other instances wait for its next poll.
  const storage = await openStorage(config, { webhookOutbox: config.webhook !== null, onOutboxWrite: () => sender?.wake() });
  const { stores } = storage;
  const shared = await openLimits(config, log);
  const metrics = config.metrics ? createMetricsService({ store: stores.metrics, hashing: hasher }) : null;
  const platform = buildPlatform(config, log, hasher, metrics, shared.limits);
  const services = createServices(stores, platform);
  const app = createApp(services, { docs: config.docs });
  const handler = createHandler(app, services, { keys, log, docs: config.docs });
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // Bun would answer a body over its limit with an empty 413 before our handler runs, ahead of the
    // credential check; our handler refuses by Content-Length and stops reading a stream at 64 KiB.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Bun's default without NODE_ENV=production is development mode, which answers an escaped error
    // with a page of its message and stack; a credential service never runs in it.
    development: false,
    // Which, off, also turns SO_REUSEPORT on by default: a second server on a taken port would share it, not fail.
    reusePort: false,
    fetch: handler,
    routes: handler.routes,
    error: escapedFailure(log),
  });
  const keysWatcher = config.keysFile === null ? null : watchKeysFile({ path: config.keysFile, ring: keys, load: loadKeysFile, log, onFailure: metrics?.countKeysReloadFailure });
  const reloadKeys = () => keysWatcher?.reload();
  if (keysWatcher !== null) process.on('SIGHUP', reloadKeys);
  const clock = platform.clock;
  const sweeper = startSweeper({ store: stores.codeRequests, clock, log });
  const eventSweeper = startEventSweeper({ store: stores.events, clock, log, retentionDays: config.eventsRetentionDays });
  if (config.webhook !== null) {
    sender = startWebhookSender({
      store: stores.webhooks,
      target: config.webhook,
      clock,
      log,
      timings: scaledTimings(config.webhookTimingScale),
      onAttempt: metrics?.countDeliveryAttempt,
    });
    // The origin only: a path or query may carry a token of the receiver's.
    log({ level: 'info', message: `sending events to the webhook at ${new URL(config.webhook.url).origin}` });
  }
  if (config.passwordMigration !== null) {
    log({ level: 'info', message: `asking the password migration hook at ${new URL(config.passwordMigration.url).origin}` });
  }
  log({ level: 'info', message: `listening on ${server.url.href.replace(/\/$/, '')}`, port: server.port, storage: storage.kind });
  const stop = async () => {
    // A sweep under way finishes its batch before the storage closes (else it logs a failure at exit).
    const sweeps = Promise.all([sweeper.stop(), eventSweeper.stop()]);
    keysWatcher?.stop();
    process.off('SIGHUP', reloadKeys);
    await server.stop(false);
    // After the requests: their events are in the outbox by now, and go out on the next start.
    await sender?.stop();
    await sweeps;
    shared.close();
    await storage.close();
    log({ level: 'info', message: 'stopped: requests in flight answered, storage closed' });
  };
  return { server, stop, stores, sqlite: storage.sqlite, platform };
}
