import type { Db } from './db/client';
import type { Logger } from './http/log';
import type { BreachChecker } from './security/breach-check';
import type { Clock } from './security/clock';
import type { PasswordHasher } from './security/password-hash';
import type { RateLimits } from './security/rate-limit';

/** Everything a route needs from outside itself; tests pass fakes for the clock and the breach checker. */
export interface Deps {
  db: Db;
  clock: Clock;
  breach: BreachChecker;
  limits: RateLimits;
  hasher: PasswordHasher;
  log: Logger;
}
