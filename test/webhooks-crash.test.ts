import { Database } from 'bun:sqlite';
import { afterAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { expectNoneOf } from './support/events';
import { type ServerProcess, startServer, tempDirsOfThisFile } from './support/server-process';
import { newWebhookSecret, type Receiver, startReceiver, waitUntil } from './support/webhook-receiver';

/**
 * The real server, SIGKILLed with deliveries pending, then restarted: every event still reaches the
 * receiver (API.md §12: a crash loses no event); duplicates are allowed and carry the same webhook-id.
 * GATEHOUSE_WEBHOOK_TIMING_SCALE shrinks the retry delays, timeouts and leases twentyfold.
 */
const tempDir = tempDirsOfThisFile();
const SECRET = 'crash-test-secret-0123456789';
const KEY = Buffer.alloc(20, 9).toString('base64');
const totpCode = () => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(KEY, 'base64')).buffer }) });
const receivers: Receiver[] = [];
afterAll(() => receivers.forEach((r) => r.stop()));

function start(dir: string, url: string, webhookSecret: string): Promise<ServerProcess> {
  return startServer({
    dir,
    args: ['serve', '--port', '0', '--dir', dir, '--pwned-check', 'off', '--secret', SECRET, '--webhook-url', url],
    env: { GATEHOUSE_WEBHOOK_SECRET: webhookSecret, GATEHOUSE_WEBHOOK_TIMING_SCALE: '0.05' },
  });
}

/**
 * The server's database file, read on a connection of its own for each look (WAL lets it read while
 * the server writes): a connection kept open across a SIGKILL and a restart, which rebuilds the WAL
 * index, was seen to answer from an old view of the outbox.
 */
function outboxOf(dir: string) {
  const read = <T>(sql: string): T[] => {
    const db = new Database(join(dir, 'gatehouse.db'), { readonly: true });
    try {
      return db.query<T, []>(sql).all();
    } finally {
      db.close();
    }
  };
  return {
    rows: () => read<{ event_id: number; attempts: number; state: string }>('select event_id, attempts, state from webhook_deliveries'),
    eventIds: () => read<{ id: number }>('select id from events order by id').map((row) => row.id),
    webhookIds: () => new Map(read<{ id: number; webhook_id: string }>('select id, webhook_id from events').map((row) => [row.id, row.webhook_id])),
    close: () => {},
  };
}

describe('webhook delivery across crashes', () => {
  test('SIGKILL with deliveries pending, twice: after restarts every event is delivered', async () => {
    const dir = tempDir();
    const webhookSecret = newWebhookSecret();
    // Reserve a port, then leave it closed: the receiver is down at first.
    const probe = startReceiver(webhookSecret);
    const port = probe.port;
    const url = probe.url;
    probe.stop();

    let server = await start(dir, url, webhookSecret);
    const user = (await (await server.request('POST', '/users', { password: 'crash test password 1' })).json()) as { id: string; recovery_code: string };
    for (let i = 0; i < 8; i++) await server.request('POST', `/users/${user.id}/register-totp`, { key: KEY, code: totpCode() });
    await server.request('DELETE', `/users/${user.id}/totp-credential`);
    const outbox = outboxOf(dir);
    try {
      await waitUntil(() => outbox.rows().length === 10 && outbox.rows().every((row) => row.attempts >= 2), 10_000, 'failed attempts');
      expect(await server.stop('SIGKILL')).not.toBe(0);
      expect(outbox.rows()).toHaveLength(10);

      // Back up, but holding its answers until the second SIGKILL has come: those deliveries are in
      // flight at the kill whatever the machine's load (a fixed pause let a slow test answer first).
      let killed!: () => void;
      const afterKill = new Promise<void>((resolve) => (killed = resolve));
      const receiver = startReceiver(webhookSecret, {
        port,
        behaviour: async () => {
          await afterKill;
          return new Response(null, { status: 204 });
        },
      });
      receivers.push(receiver);
      server = await start(dir, url, webhookSecret);
      await server.request('POST', `/users/${user.id}/verify-password`, { password: 'not the password' });
      await waitUntil(() => receiver.deliveries.length >= 1, 10_000, 'a delivery in flight');
      expect(await server.stop('SIGKILL')).not.toBe(0);
      const inFlightAtKill = receiver.deliveries.map((d) => d.id);
      killed();
      expect(outbox.rows().length).toBeGreaterThan(0);

      server = await start(dir, url, webhookSecret);
      await server.request('DELETE', `/users/${user.id}`);
      await waitUntil(() => outbox.rows().length === 0, 15_000, 'the outbox to drain');
      const all = outbox.eventIds();
      expect(all).toHaveLength(12);
      expect([...receiver.eventIds()].sort((a, b) => a - b)).toEqual(all);
      const webhookIds = outbox.webhookIds();
      for (const delivery of receiver.deliveries) {
        const event = JSON.parse(delivery.body) as { id: number };
        expect(delivery.verified.ok).toBe(true);
        expect(delivery.id).toMatch(/^evt_[0-9a-f]{32}$/);
        expect(delivery.id).toBe(webhookIds.get(event.id)!);
      }
      // Those cut off by the kill came again, with the same id and the same body.
      const again = inFlightAtKill.filter((id) => receiver.deliveries.filter((d) => d.id === id).length >= 2);
      expect(again.length).toBeGreaterThan(0);
      for (const id of again) expect(new Set(receiver.deliveries.filter((d) => d.id === id).map((d) => d.body)).size).toBe(1);
      expectNoneOf(receiver.deliveries.map((d) => d.body), [SECRET, webhookSecret, KEY, 'crash test password 1', 'not the password', user.recovery_code]);
      expect(await server.stop()).toBe(0);
    } finally {
      outbox.close();
    }
  }, 60_000);
});
