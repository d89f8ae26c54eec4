import { createApp, createHandler, createServices, type Platform } from '../app';
import { startSweeper } from '../code-requests/service';
import { openDatabase } from '../db/client';
import { type Logger, stdoutLogger } from '../http/log';
import { createBreachChecker } from '../security/breach-check';
import { systemClock } from '../security/clock';
import { PasswordHasher } from '../security/password-hash';
import { createRateLimits } from '../security/rate-limit';
import { sqliteStores } from '../stores';
import type { ServeConfig } from './config';
import { resolveSecret } from './secret';

/** Argon2 runs on Bun's thread pool; a few more than the cores keeps them busy while others wait on I/O. */
const HASHING_LIMITS = { concurrency: 4, maxQueue: 512 };

function buildPlatform(config: ServeConfig, log: Logger): Platform {
  const clock = systemClock;
  return {
    clock,
    breach: createBreachChecker({
      mode: config.pwnedCheck,
      apiBaseUrl: config.pwnedApiUrl,
      log: (message) => log({ level: 'warn', message }),
    }),
    limits: createRateLimits(clock),
    hasher: new PasswordHasher(HASHING_LIMITS),
    log,
    relyingParty: config.relyingParty,
  };
}

/** Starts serving and resolves to a `stop` that drains requests in flight and closes the database. */
export function serve(config: ServeConfig, log: Logger = stdoutLogger) {
  // Before anything is opened or created: a refused secret file stops start-up with nothing written.
  const { secret, origin } = resolveSecret(config);
  if (origin !== null) log({ level: 'info', message: origin });
  const platform = buildPlatform(config, log);
  const db = openDatabase(config.dir);
  const stores = sqliteStores(db);
  const app = createApp(createServices(stores, platform), { log, docs: config.docs });
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // Bun would answer a body over its limit with an empty 413 before our handler runs, ahead of the
    // credential check; our handler refuses by Content-Length and stops reading a stream at 64 KiB.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    fetch: createHandler(app, { secret, log, docs: config.docs }),
  });
  const sweeper = startSweeper({ store: stores.codeRequests, clock: platform.clock, log });
  log({ level: 'info', message: `listening on ${server.url.href.replace(/\/$/, '')}`, port: server.port });
  const stop = async () => {
    sweeper.stop();
    await server.stop(false);
    db.$client.close();
  };
  return { server, stop, db, platform };
}
