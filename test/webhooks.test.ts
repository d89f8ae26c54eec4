import { afterEach, describe, expect, test } from 'bun:test';
import { openDatabase } from '../src/db/client';
import { parseWebhookSecret, signWebhook } from '../src/security/webhook-signature';
import { SQL } from 'bun';
import type { Db } from '../src/db/client';
import { openPostgres, type PgDb } from '../src/db/pg-client';
import { postgresStores, sqliteStores } from '../src/stores';
import type { WebhookStore } from '../src/webhooks/store';
import { SETUP, sharedEngines } from './support/setups';
import { DEFAULT_DELIVERY_TIMINGS, type DeliveryTimings, resultOf, retryDelayMs } from '../src/webhooks/model';
import { startWebhookSender } from '../src/webhooks/service';
import { Webhook } from 'standardwebhooks';
import { FastHasher } from './fuzz/seed';
import { expectNoneOf } from './support/events';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { rowsOf } from './support/rows';
import { parseSamples, sumOf } from './support/prom-text';
import { newWebhookSecret, type Receiver, startReceiver, waitUntil } from './support/webhook-receiver';
import { makeTempDir, removeDir } from './support/server-process';

/** Milliseconds instead of seconds and hours, so retries and the 24-hour window fit in a test. */
const FAST: DeliveryTimings = { retryBaseMs: 40, retryMaxMs: 200, retryWindowMs: 60_000, attemptTimeoutMs: 400, idlePollMs: 20 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `fakeClock`: the harness's own clock, which only moves with h.advance(), instead of Date.now. */
function setup(receiver: Receiver | { url: string }, secret: string, timings = FAST, { fakeClock = false } = {}) {
  // The fake clock starts at the real time: receivers refuse timestamps more than 5 minutes off.
  const h = createHarness({ clock: fakeClock ? undefined : Date.now, startMs: Date.now(), hasher: new FastHasher(), webhook: { url: receiver.url, key: parseWebhookSecret(secret)!, timings } });
  // Every instance sends (two on the postgres-2 set-up, each claiming its own rows).
  cleanups.push(() => Promise.all(h.instances.map((instance) => instance.sender?.stop())));
  const outbox = async () => (await rowsOf(h, 'webhookDeliveries')).map((row) => ({ event_id: row.eventId, state: row.state, attempts: row.attempts }));
  return { h, outbox };
}

const WEBHOOK_ID = /^evt_[0-9a-f]{32}$/;
/** The webhook-id stored with event `eventId`. */
const webhookIdOf = async (h: { instances: unknown }, eventId: number): Promise<string> =>
  (await rowsOf(h as never, 'events')).find((row) => row.id === eventId)!.webhookId;

function receiver(secret: string, options: Parameters<typeof startReceiver>[1] = {}) {
  const r = startReceiver(secret, options);
  cleanups.push(() => r.stop());
  return r;
}

describe('webhook signatures', () => {
  test('node:crypto signs exactly as the standardwebhooks package does', () => {
    const secret = newWebhookSecret();
    const body = '{"id":1,"time":1795310920,"type":"user.created","user_id":"u","client_ip":null}';
    const now = Math.floor(Date.now() / 1000);
    expect(signWebhook(parseWebhookSecret(secret)!, 'evt_1', now, body)).toBe(new Webhook(secret).sign('evt_1', new Date(now * 1000), body));
  });

  test('secrets: whsec_ and standard base64 of 24 to 64 bytes', () => {
    const of = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;
    expect(parseWebhookSecret(of(24))).toHaveLength(24);
    expect(parseWebhookSecret(of(64))).toHaveLength(64);
    for (const bad of [of(23), of(65), Buffer.alloc(32, 7).toString('base64'), 'whsec_', 'whsec_not base64!', of(32).replace(/=+$/, '').replace('A', '-')]) {
      expect({ bad, key: parseWebhookSecret(bad) }).toEqual({ bad, key: undefined });
    }
  });
});

describe('retry schedule', () => {
  test('doubles from 5 s to at most an hour, ±20 %, for 24 hours after the event', () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 10, 11, 50].map((n) => retryDelayMs(n, DEFAULT_DELIVERY_TIMINGS, middle) / 1000)).toEqual([5, 10, 20, 40, 2560, 3600, 3600]);
    expect(retryDelayMs(1, DEFAULT_DELIVERY_TIMINGS, () => 0)).toBe(4000);
    expect(retryDelayMs(1, DEFAULT_DELIVERY_TIMINGS, () => 0.999999)).toBeCloseTo(6000, 0);
    const event = { id: 7, time: 1_000_000, type: 'user.created', userId: null, clientIp: null, actor: null };
    const dayMs = 24 * 60 * 60 * 1000;
    expect(resultOf(event, 3, 'HTTP 500', event.time * 1000 + dayMs - 1, DEFAULT_DELIVERY_TIMINGS)).toMatchObject({ outcome: 'retry' });
    expect(resultOf(event, 3, 'timeout', event.time * 1000 + dayMs, DEFAULT_DELIVERY_TIMINGS)).toEqual({ eventId: 7, outcome: 'failed' });
    expect(resultOf(event, 3, undefined, event.time * 1000 + 2 * dayMs, DEFAULT_DELIVERY_TIMINGS)).toEqual({ eventId: 7, outcome: 'delivered' });
    expect(resultOf(event, 3, 'stopped', 123, DEFAULT_DELIVERY_TIMINGS)).toEqual({ eventId: 7, outcome: 'retry', nextAttemptAtMs: 123 });
  });
});

describe('delivery', () => {
  test('each event is POSTed once, signed, as GET /events shows it, and leaves the outbox', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret);
    const { h, outbox } = setup(r, secret);
    const user = await h.createUser({ client_ip: '203.0.113.7' });
    await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'not the password' } });
    await h.call('DELETE', `/users/${user.id}`);
    await waitUntil(async () => r.deliveries.length >= 3 && (await outbox()).length === 0, 5000, 'three deliveries');
    const listed = (await h.call('GET', '/events')).json;
    expect(r.deliveries.map((d) => d.verified)).toEqual(listed.map((event: unknown) => ({ ok: true, payload: event })));
    const stored = await rowsOf(h, 'events');
    expect(r.deliveries.map((d) => d.id)).toEqual(listed.map((event: { id: number }) => stored.find((row) => row.id === event.id)!.webhookId));
    expect(r.deliveries.every((d) => WEBHOOK_ID.test(d.id))).toBe(true);
    expect(r.deliveries.map((d) => JSON.parse(d.body).type)).toEqual(['user.created', 'password.incorrect', 'user.deleted']);
    await Bun.sleep(100);
    expect(r.deliveries).toHaveLength(3);
    expectNoneOf(r.deliveries.map((d) => d.body), [secret, secret.slice(6), SECRET, STRONG_PASSWORD, 'not the password', user.recovery_code]);
  });

  test('a receiver that is down for a while gets every event once it is back, with the same webhook-id', async () => {
    const secret = newWebhookSecret();
    const gone = receiver(secret);
    const port = gone.port;
    gone.stop();
    const { h, outbox } = setup({ url: `http://127.0.0.1:${port}/hooks/gatehouse` }, secret);
    for (let i = 0; i < 5; i++) await h.createUser();
    await waitUntil(async () => (await outbox()).every((row) => row.attempts >= 3), 5000, 'three failed attempts each');
    expect((await outbox()).map((row) => row.state)).toEqual(Array(5).fill('pending'));
    expect(h.logs.some((line) => line.message === 'webhook deliveries will be retried' && line.reason === 'network error')).toBe(true);
    const back = receiver(secret, { port });
    await waitUntil(async () => (await outbox()).length === 0, 5000, 'the outbox to drain');
    expect([...back.eventIds()].sort()).toEqual([1, 2, 3, 4, 5]);
    const stored = new Map((await rowsOf(h, 'events')).map((row) => [row.id, row.webhookId]));
    expect(back.deliveries.every((d) => d.verified.ok && d.id === stored.get(JSON.parse(d.body).id))).toBe(true);
  });

  test('500 then 200: retried with backoff until acknowledged, the second wait twice the first (± 20 %)', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret, { behaviour: (attempt) => new Response('no', { status: attempt < 2 ? 500 : 200 }) });
    // On the harness's clock, which stands still: each wait is read from the row, not from the wall clock.
    const { h, outbox } = setup(r, secret, FAST, { fakeClock: true });
    await h.createUser();
    /** The wait the sender scheduled after its `attempts`-th failure (once it has written that back). */
    const scheduledWait = async (attempts: number) => {
      let row: Record<string, any> | undefined;
      await waitUntil(async () => {
        [row] = await rowsOf(h, 'webhookDeliveries');
        return row?.attempts === attempts && row.leaseUntilMs === 0;
      }, 5000, `failed attempt ${attempts} written back`);
      return Number(row!.nextAttemptAtMs) - h.now();
    };
    const first = await scheduledWait(1);
    expect(r.deliveries).toHaveLength(1); // not retried while the clock stands still
    h.advance(first);
    const second = await scheduledWait(2);
    h.advance(second);
    await waitUntil(async () => (await outbox()).length === 0, 5000, 'delivery');
    expect(r.deliveries.map((d) => d.id)).toEqual(Array(3).fill(await webhookIdOf(h, 1)));
    expect(r.deliveries.every((d) => d.verified.ok)).toBe(true);
    // Exponential: base 40 ms ± 20 %, then 80 ms ± 20 % (ranges that cannot overlap), so the second wait is the longer.
    expect({ first: first >= 32 && first <= 48, second: second >= 64 && second <= 96 }).toEqual({ first: true, second: true });
    expect(second).toBeGreaterThan(first);
    const samples = parseSamples((await h.callEach('GET', '/metrics')).join('\n'));
    expect(sumOf(samples, 'gatehouse_webhook_delivery_attempts_total', { outcome: 'retry' })).toBe(2);
    expect(sumOf(samples, 'gatehouse_webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(1);
  });

  test('a receiver slower than the attempt timeout is retried; one within it is not duplicated', async () => {
    const secret = newWebhookSecret();
    // The first attempt is never answered, so only the timeout ends it; the second is answered after
    // 50 ms, far inside a 1.5 s timeout, so a busy machine cannot turn it into a timeout too.
    const r = receiver(secret, {
      behaviour: async (attempt) => {
        if (attempt === 0) return new Promise<Response>(() => {});
        await Bun.sleep(50);
        return new Response(null, { status: 200 });
      },
    });
    const { h, outbox } = setup(r, secret, { ...FAST, attemptTimeoutMs: 1_500 });
    await h.createUser();
    await waitUntil(async () => (await outbox()).length === 0, 5000, 'delivery');
    expect(r.deliveries.map((d) => d.id)).toEqual(Array(2).fill(await webhookIdOf(h, 1)));
    expect(h.logs.some((line) => line.message === 'webhook deliveries will be retried' && line.reason === 'timeout')).toBe(true);
  });

  test('an answer past 64 KiB is not read further: the connection is dropped and the status counts', async () => {
    const secret = newWebhookSecret();
    let sent = 0;
    let cancelled = false;
    const chunk = new Uint8Array(16 * 1024).fill(97);
    // An endless 200 answer; only the sender hanging up ends it (cancel), never the attempt timeout here.
    const endless = () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            sent += chunk.length;
            controller.enqueue(chunk);
          },
          cancel() {
            cancelled = true;
          },
        }),
        { status: 200 },
      );
    const r = receiver(secret, { behaviour: endless });
    const { h, outbox } = setup(r, secret, { ...FAST, attemptTimeoutMs: 30_000 });
    await h.createUser();
    await waitUntil(async () => (await outbox()).length === 0, 5000, 'the delivery to be settled without reading the whole answer');
    await waitUntil(() => cancelled, 5000, 'the receiver to see the connection dropped');
    expect(r.deliveries.map((d) => d.id)).toEqual(Array(1).fill(await webhookIdOf(h, 1)));
    // What the kernel's socket buffers took before the sender hung up, nowhere near the 30 s the stream could run.
    expect(sent).toBeLessThan(16 * 1024 * 1024);
    const samples = parseSamples((await h.callEach('GET', '/metrics')).join('\n'));
    expect(sumOf(samples, 'gatehouse_webhook_delivery_attempts_total', { outcome: 'delivered' })).toBe(1);
  });

  test('after the retry window a delivery is marked failed, counted and logged', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret, { behaviour: () => new Response(null, { status: 503 }) });
    const { h, outbox } = setup(r, secret, { ...FAST, retryWindowMs: 300 });
    await h.createUser();
    await waitUntil(async () => (await outbox())[0]?.state === 'failed', 5000, 'failure');
    const attempts = r.deliveries.length;
    await Bun.sleep(200);
    expect(r.deliveries).toHaveLength(attempts);
    expect(h.logs.find((line) => line.message === 'webhook deliveries failed for good after the retry window')).toMatchObject({ event_ids: [1] });
    // Counters are per instance (summed over all); the outbox gauges read the one shared database (each says the same).
    const scrapes = (await h.callEach('GET', '/metrics')).map(parseSamples);
    for (const samples of scrapes) {
      expect(sumOf(samples, 'gatehouse_webhook_deliveries', { state: 'failed' })).toBe(1);
      expect(sumOf(samples, 'gatehouse_webhook_deliveries', { state: 'pending' })).toBe(0);
    }
    expect(sumOf(scrapes.flat(), 'gatehouse_webhook_delivery_attempts_total', { outcome: 'failed' })).toBe(1);
  });

  test('stopping gives claimed rows back at once instead of leaving them leased', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret, { behaviour: async () => new Promise(() => {}) });
    const { h, outbox } = setup(r, secret, { ...FAST, attemptTimeoutMs: 60_000 });
    await h.createUser();
    await waitUntil(() => r.deliveries.length === 1, 5000, 'the attempt');
    for (const instance of h.instances) await instance.sender!.stop();
    const [row] = await rowsOf(h, 'webhookDeliveries');
    expect({ leaseUntilMs: row?.leaseUntilMs, state: row?.state }).toEqual({ leaseUntilMs: 0, state: 'pending' });
    expect(await outbox()).toHaveLength(1);
  });
});

describe('webhook-id', () => {
  test('unique across deployments: the first event of two databases goes out under two ids, each kept across retries', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret, { behaviour: (attempt) => new Response(null, { status: attempt === 0 ? 500 : 204 }) });
    const one = setup(r, secret);
    const two = setup(r, secret);
    await one.h.createUser();
    await two.h.createUser();
    await waitUntil(async () => (await one.outbox()).length === 0 && (await two.outbox()).length === 0, 5000, 'both deliveries');
    const ids = [await webhookIdOf(one.h, 1), await webhookIdOf(two.h, 1)];
    expect(ids.every((id) => WEBHOOK_ID.test(id))).toBe(true);
    expect(ids[0]).not.toBe(ids[1]);
    expect(r.deliveries.map((d) => d.id).sort()).toEqual([ids[0]!, ids[0]!, ids[1]!, ids[1]!].sort());
    expect(r.deliveries.map((d) => JSON.parse(d.body).id)).toEqual([1, 1, 1, 1]);
  });
});

/**
 * One database that several senders share: a SQLite file, or on the PostgreSQL set-ups a fresh
 * PostgreSQL database (each sender on its own pool, as each instance has), with 300 due deliveries.
 */
async function sharedOutbox(events: number): Promise<{ store: () => Promise<WebhookStore>; left: () => Promise<number>; close: () => Promise<void> }> {
  const now = Math.floor(Date.now() / 1000);
  if (SETUP === 'sqlite') {
    const dir = makeTempDir();
    const writer = openDatabase(dir);
    const insert = writer.$client.prepare("insert into events (time, type) values (?, 'user.created')");
    writer.$client.transaction(() => {
      for (let i = 0; i < events; i++) insert.run(now);
      writer.$client.run('insert into webhook_deliveries (event_id) select id from events');
    })();
    const opened: Db[] = [];
    return {
      store: async () => {
        const db = openDatabase(dir);
        opened.push(db);
        return sqliteStores(db).webhooks;
      },
      left: async () => (writer.$client.query('select count(*) as n from webhook_deliveries').get() as { n: number }).n,
      close: async () => {
        for (const db of [...opened, writer]) db.$client.close();
        removeDir(dir);
      },
    };
  }
  const { pg } = await sharedEngines();
  const { url, name } = await pg.freshDatabase();
  const writer = new SQL({ url, max: 1 });
  await writer.begin(async (tx) => {
    await tx`insert into events (time, type) select ${now}, 'user.created' from generate_series(1, ${events})`;
    await tx`insert into webhook_deliveries (event_id) select id from events`;
  });
  const opened: PgDb[] = [];
  return {
    store: async () => {
      const db = await openPostgres(url, { maxConnections: 3 });
      opened.push(db);
      return postgresStores(db, {}).webhooks;
    },
    left: async () => Number((await writer`select count(*) as n from webhook_deliveries`)[0].n),
    close: async () => {
      for (const db of opened) await db.$client.close();
      await writer.close();
      await pg.admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

describe(`several senders on one database (${SETUP === 'sqlite' ? 'SQLite' : 'PostgreSQL: FOR UPDATE SKIP LOCKED'})`, () => {
  test('claims are exclusive: two senders deliver 300 events exactly once between them', async () => {
    const secret = newWebhookSecret();
    const r = receiver(secret, { behaviour: async () => {
      await Bun.sleep(2);
      return new Response(null, { status: 200 });
    } });
    const outbox = await sharedOutbox(300);
    const delivered = [0, 0];
    const senders = await Promise.all([0, 1].map(async (n) =>
      startWebhookSender({
        onAttempt: (outcome) => outcome === 'delivered' && delivered[n]!++,
        store: await outbox.store(),
        target: { url: r.url, key: parseWebhookSecret(secret)! },
        clock: Date.now,
        log: () => {},
        timings: FAST,
        concurrency: 8,
      }),
    ));
    cleanups.push(async () => {
      for (const sender of senders) await sender.stop();
      await outbox.close();
    });
    await waitUntil(async () => (await outbox.left()) === 0, 20_000, 'the outbox to drain');
    expect(r.deliveries).toHaveLength(300);
    expect(r.eventIds().size).toBe(300);
    // Both took part: the exclusivity was tested, not one sender doing it all.
    expect(delivered[0]! + delivered[1]!).toBe(300);
    expect(Math.min(...delivered)).toBeGreaterThan(20);
  });
});
