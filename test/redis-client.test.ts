// What we rely on from Bun's RedisClient against a real redis-server (notes/pg-redis-findings.md).
import { RedisClient } from 'bun';
import { afterEach, describe, expect, test } from 'bun:test';
import { redisForThisFile } from './support/redis';

const redis = await redisForThisFile('Bun RedisClient');
const clients: RedisClient[] = [];
const client = (options: ConstructorParameters<typeof RedisClient>[1] = {}) => {
  const c = new RedisClient(redis.server().url, options);
  clients.push(c);
  return c;
};

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  if (redis.skip) return;
  redis.server().thaw();
  await redis.server().start();
}, 30_000);

async function settle<T>(task: Promise<T>, giveUpMs: number): Promise<{ ms: number; value?: T; error?: { code?: string; message: string }; waiting?: true }> {
  const start = performance.now();
  task.catch(() => undefined);
  const outcome = await Promise.race([
    task.then((value) => ({ value }), (error: Error & { code?: string }) => ({ error: { code: error.code, message: error.message } })),
    Bun.sleep(giveUpMs).then(() => ({ waiting: true as const })),
  ]);
  return { ms: performance.now() - start, ...outcome };
}

describe.skipIf(redis.skip)('Lua scripts through send()', () => {
  test('EVAL runs a script atomically; replies become numbers, strings, arrays and null', async () => {
    const c = client();
    expect(await c.send('EVAL', ["return {1, 'two', 3.7, true, false, 'after'}", '0'])).toEqual([1, 'two', 3, 1, null, 'after']);
    expect(await c.send('EVAL', ['return nil', '0'])).toBeNull();
    // A Lua nil ends an array, as in Lua itself.
    expect(await c.send('EVAL', ["return {1, nil, 3}", '0'])).toEqual([1]);
    expect(await c.send('EVAL', ["redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]); return redis.call('PTTL', KEYS[1])", '1', 'script-key', 'v', '5000'])).toBe(5000);
  });

  test('EVALSHA runs a loaded script; an unknown one fails with NOSCRIPT (ERR_REDIS_SERVER_ERROR)', async () => {
    const c = client();
    const sha = await c.send('SCRIPT', ['LOAD', 'return ARGV[1]']);
    expect(sha).toBe(new Bun.CryptoHasher('sha1').update('return ARGV[1]').digest('hex'));
    expect(await c.send('EVALSHA', [sha, '0', 'hello'])).toBe('hello');
    const missing = await settle(c.send('EVALSHA', ['0'.repeat(40), '0']), 1000);
    expect(missing.error).toEqual({ code: 'ERR_REDIS_SERVER_ERROR', message: 'NOSCRIPT No matching script. Please use EVAL.' });
    const failing = await settle(c.send('EVAL', ["return redis.error_reply('BOOM')", '0']), 1000);
    expect(failing.error).toEqual({ code: 'ERR_REDIS_SERVER_ERROR', message: 'ERR BOOM' });
  });

  test('send() returns integers as numbers (EXISTS too), SET NX answers OK or null', async () => {
    const c = client();
    expect(await c.send('EXISTS', ['nothing-here'])).toBe(0);
    expect(await c.send('SET', ['nx-key', 'a', 'NX', 'PX', '1000'])).toBe('OK');
    expect(await c.send('SET', ['nx-key', 'b', 'NX', 'PX', '1000'])).toBeNull();
  });
});

describe.skipIf(redis.skip)('when Redis goes away', () => {
  test('by default commands wait in the offline queue until Redis is back', async () => {
    const c = client();
    await c.connect();
    await redis.server().kill();
    const queued = c.send('PING', []);
    const restart = Bun.sleep(600).then(() => redis.server().start());
    const outcome = await settle(queued, 5000);
    await restart;
    expect(outcome.value).toBe('PONG');
    expect(outcome.ms).toBeGreaterThan(550);
  });

  test('once its retries are spent the client refuses every command, even with Redis back, until connect()', async () => {
    const c = client({ maxRetries: 2 });
    await c.connect();
    await redis.server().kill();
    const spent = await settle(c.send('PING', []), 5000);
    expect(spent.error).toEqual({ code: 'ERR_REDIS_CONNECTION_CLOSED', message: 'Max reconnection attempts reached' });
    await redis.server().start();
    const still = await settle(c.send('PING', []), 1000);
    expect(still.error).toEqual({ code: 'ERR_REDIS_CONNECTION_CLOSED', message: 'Connection has failed' });
    await c.connect();
    expect(await c.send('PING', [])).toBe('PONG');
  });

  test('without the offline queue a command fails at once, also the first one before connect()', async () => {
    const c = client({ enableOfflineQueue: false });
    const first = await settle(c.send('PING', []), 1000);
    expect(first.error).toEqual({ code: 'ERR_REDIS_CONNECTION_CLOSED', message: 'Connection is closed and offline queue is disabled' });
    await c.connect();
    await redis.server().kill();
    // Settled with an error rather than still waiting when settle() gave up: it failed instead of queueing.
    const down = await settle(c.send('PING', []), 2000);
    expect(down.error?.code).toBe('ERR_REDIS_CONNECTION_CLOSED');
  });

  test('a hung server leaves commands waiting; connectionTimeout bounds only a new connection', async () => {
    const c = client({ enableOfflineQueue: false, connectionTimeout: 300 });
    await c.connect();
    redis.server().freeze();
    const hung = await settle(c.send('PING', []), 1000);
    expect(hung.waiting).toBe(true);
    const fresh = client({ enableOfflineQueue: false, connectionTimeout: 300 });
    const connecting = await settle(fresh.connect(), 5000);
    expect(connecting.ms).toBeGreaterThanOrEqual(250);
    expect(connecting.error?.code).toBe('ERR_REDIS_CONNECTION_CLOSED');
  });
});
