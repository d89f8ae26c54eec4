import { inArray } from 'drizzle-orm';
import type { Db } from '../db/client';
import { events, webhookDeliveries as deliveries } from '../db/schema';
import type { StoredEvent } from '../events/model';
import type { AttemptResult } from './model';

export interface ClaimedDelivery {
  event: StoredEvent;
  /** Attempts so far, this one included. */
  attempts: number;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface WebhookStore {
  /**
   * Claims up to `limit` due rows (pending, next attempt and any earlier lease passed) for `token`
   * until `leaseUntilMs`, counting the attempt: one conditional UPDATE, so two senders (two
   * instances) never hold a row at once, and a crashed sender's rows come back when its lease ends.
   */
  claim(nowMs: number, leaseUntilMs: number, token: string, limit: number): Promise<ClaimedDelivery[]>;
  /**
   * Writes a batch of attempts back in one transaction: delivered rows are deleted; retries and
   * failures change a row only while `token` still holds it.
   */
  settle(token: string, results: readonly AttemptResult[]): Promise<void>;
}

/*
 * PostgreSQL: the claim becomes `update ... where event_id in (select event_id ... for update skip
 * locked limit $n) returning ...`, so concurrent senders skip each other's rows instead of waiting.
 * SQLite runs one writer at a time, and a single UPDATE is already atomic.
 */
const CLAIM = `update webhook_deliveries
  set lease_until_ms = ?, lease_token = ?, attempts = attempts + 1
  where event_id in (
    select event_id from webhook_deliveries
    where state = 'pending' and next_attempt_at_ms <= ? and lease_until_ms <= ?
    order by next_attempt_at_ms, event_id limit ?)
  returning event_id as eventId, attempts`;

export function sqliteWebhookStore(db: Db): WebhookStore {
  const claim = db.$client.query<{ eventId: number; attempts: number }, [number, string, number, number, number]>(CLAIM);
  const retry = db.$client.query<never, [number, number, string]>(
    'update webhook_deliveries set next_attempt_at_ms = ?, lease_until_ms = 0, lease_token = null where event_id = ? and lease_token = ?',
  );
  const fail = db.$client.query<never, [number, string]>(
    "update webhook_deliveries set state = 'failed', lease_until_ms = 0, lease_token = null where event_id = ? and lease_token = ?",
  );
  return {
    async claim(nowMs, leaseUntilMs, token, limit) {
      return db.transaction((tx) => {
        const claimed = claim.all(leaseUntilMs, token, nowMs, nowMs, limit);
        if (claimed.length === 0) return [];
        const rows = tx.select().from(events).where(inArray(events.id, claimed.map((row) => row.eventId))).all();
        const byId = new Map(rows.map((row) => [row.id, row]));
        // An event swept meanwhile took its outbox row with it (foreign key cascade).
        return claimed.flatMap(({ eventId, attempts }) => {
          const event = byId.get(eventId);
          return event === undefined ? [] : [{ event, attempts }];
        });
      });
    },
    async settle(token, results) {
      if (results.length === 0) return;
      db.transaction((tx) => {
        const delivered = results.filter((r) => r.outcome === 'delivered').map((r) => r.eventId);
        if (delivered.length > 0) tx.delete(deliveries).where(inArray(deliveries.eventId, delivered)).run();
        for (const result of results) {
          if (result.outcome === 'retry') retry.run(result.nextAttemptAtMs, result.eventId, token);
          else if (result.outcome === 'failed') fail.run(result.eventId, token);
        }
      });
    },
  };
}
