import { describe, expect, test } from 'bun:test';
import { TokenBucketLimiter } from '../src/limits/limiters';
import { PasswordHasher } from '../src/hashing/password-hash';
import { createHarness, STRONG_PASSWORD } from './support/harness';

describe('password hashing flood', () => {
  test('beyond the bounded queue, requests get 503 SERVER_BUSY with Retry-After, and the rest succeed', async () => {
    const h = createHarness({ hashing: { concurrency: 1, maxQueue: 3 } });
    const user = await h.createUser();
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD } })),
    );
    const busy = responses.filter((r) => r.status === 503);
    const ok = responses.filter((r) => r.status === 204);
    // One running + three queued in each instance (each process has its own hasher; two on postgres-2, six requests each).
    expect(ok.length).toBe(4 * h.instances.length);
    expect(busy.length).toBe(12 - 4 * h.instances.length);
    for (const r of busy) {
      expect(r.json).toEqual({ error: 'SERVER_BUSY' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // Once the flood has drained, the service answers normally again.
    const after = await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: STRONG_PASSWORD } });
    expect(after.status).toBe(204);
  });

  test('never runs more hashes at once than its concurrency limit', async () => {
    const hasher = new PasswordHasher({ concurrency: 2, maxQueue: 100 });
    let running = 0;
    let peak = 0;
    const original = Bun.password.verify;
    Bun.password.verify = (async (...args: Parameters<typeof original>) => {
      running++;
      peak = Math.max(peak, running);
      try {
        return await original(...args);
      } finally {
        running--;
      }
    }) as typeof original;
    try {
      const hash = await Bun.password.hash('some password here', { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });
      const results = await Promise.all(Array.from({ length: 10 }, () => hasher.verify('some password here', hash)));
      expect(results.every(Boolean)).toBe(true);
      expect(peak).toBe(2);
    } finally {
      Bun.password.verify = original;
    }
  });

  test('a flood without client_ip cannot grow the queue without bound', async () => {
    const hasher = new PasswordHasher({ concurrency: 1, maxQueue: 5 });
    const hash = await Bun.password.hash('x'.repeat(10), { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 });
    const outcomes = await Promise.allSettled(Array.from({ length: 200 }, () => hasher.verify('x'.repeat(10), hash)));
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBe(6);
    expect(outcomes.filter((o) => o.status === 'rejected').length).toBe(194);
  });
});

describe('rate-limit memory under a flood of addresses', () => {
  test('a million distinct client_ip values keep the address map bounded and limits correct for active keys', () => {
    // The address bucket of the in-process limits, with createRateLimits' settings and default key cap.
    const address = new TokenBucketLimiter({ capacity: 5, refillMs: 10_000, clock: () => Date.UTC(2026, 0, 1) });
    for (let i = 0; i < 5; i++) expect(address.consume('198.51.100.7').ok).toBe(true);
    for (let i = 0; i < 1_000_000; i++) {
      address.consume(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}-${i}`);
      // The active attacker keeps trying, so its key stays recent and stays limited.
      if (i % 50_000 === 0) expect(address.consume('198.51.100.7').ok).toBe(false);
    }
    expect(address.size).toBeLessThanOrEqual(100_000);
    expect(address.consume('198.51.100.7').ok).toBe(false);
  }, 60_000); // a million keys: about 2 s idle, more on a busy machine
});
