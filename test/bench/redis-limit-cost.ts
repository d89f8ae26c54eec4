// `bun run test/bench/redis-limit-cost.ts`: what one limit check costs in Redis (EVALSHA round trip),
// one at a time and 32 in flight on one connection. Numbers in notes/pg-redis-findings.md.
import { createRateLimits } from '../../src/limits/rate-limit';
import { createSharedRateLimits } from '../../src/limits/rate-limit-shared';
import { RedisLink } from '../../src/limits/redis-link';
import { reportSkipped } from '../support/debian-packages';
import { redisAvailability, startRedis } from '../support/redis';

const SEQUENTIAL = 10_000;
const PARALLEL = 50_000;
const IN_FLIGHT = 32;

if (reportSkipped('redis-limit-cost', await redisAvailability())) process.exit(0);
const server = await startRedis();
const link = new RedisLink({ url: server.url, log: (fields) => console.error(fields) });
try {
  await link.start();
  const clock = () => Date.now();
  // Only the shared path is measured; the local limits are never asked while Redis answers.
  const limits = createSharedRateLimits({ link, clock, local: createRateLimits(clock) });
  const variants: Record<string, (i: number) => Promise<unknown>> = {
    'address bucket consume (script)': (i) => limits.address.consume(`10.0.${i % 200}.${i % 250}`),
    'login block check (GET)': (i) => limits.loginBlock.check(`10.0.${i % 200}.${i % 250}`),
    'login block recordFailure (script)': (i) => limits.loginBlock.recordFailure(`10.1.${i % 200}.${i % 250}`),
    'password-check lock run (SET NX + release script)': (i) => limits.serial.run(`10.2.${i % 200}.${i % 250}`, async () => undefined),
  };
  console.log(`| call | sequential round trip | ${IN_FLIGHT} in flight, one connection |`);
  console.log('|---|---|---|');
  for (const [name, call] of Object.entries(variants)) {
    for (let i = 0; i < 1000; i++) await call(i);
    let start = performance.now();
    for (let i = 0; i < SEQUENTIAL; i++) await call(i);
    const roundTripUs = ((performance.now() - start) * 1000) / SEQUENTIAL;
    start = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < PARALLEL) await call(next++);
    }));
    const perSecond = PARALLEL / ((performance.now() - start) / 1000);
    console.log(`| ${name} | ${roundTripUs.toFixed(0)} µs | ${Math.round(perSecond).toLocaleString('en')} /s |`);
  }
} finally {
  link.close();
  await server.close();
}
