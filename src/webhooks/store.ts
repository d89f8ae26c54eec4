import type { Db } from '../db/client';
import type { StoredEvent } from '../events/model';
import type { AttemptResult } from './model';

export interface ClaimedDelivery {
  event: StoredEvent;
  /** Stored with the event (events.webhook_id): the same for every attempt, unique across deployments. */
  webhookId: string;
  /** Attempts so far, this one included. */
  attempts: number;
}

export interface Claim {
  nowMs: number;
  leaseUntilMs: number;
  /** Rows to claim at most; 0 only writes the results back. */
  limit: number;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface WebhookStore {
  /**
   * One turn of a sender, in one transaction (one commit, however many rows):
   * 1. writes back finished attempts: delivered rows are deleted; retries and failures change a row
   *    only while `token` still holds it;
   * 2. claims up to `limit` due rows (pending, next attempt and any earlier lease passed) for
   *    `token` until `leaseUntilMs`, counting the attempt: one conditional UPDATE, so two senders
   *    (two instances) never hold a row at once, and a crashed sender's rows come back when its
   *    lease ends.
   */
  settleAndClaim(token: string, results: readonly AttemptResult[], claim: Claim): Promise<ClaimedDelivery[]>;
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
  // A JSON array of ids as the one parameter: one prepared statement for any number of rows.
  const deleteDelivered = db.$client.query<never, [string]>('delete from webhook_deliveries where event_id in (select value from json_each(?))');
  const eventsById = db.$client.query<StoredEvent & { webhookId: string }, [string]>(
    'select id, time, type, user_id as userId, client_ip as clientIp, actor, webhook_id as webhookId from events where id in (select value from json_each(?))',
  );
  const settle = (token: string, results: readonly AttemptResult[]) => {
    const delivered = results.filter((r) => r.outcome === 'delivered').map((r) => r.eventId);
    if (delivered.length > 0) deleteDelivered.run(JSON.stringify(delivered));
    for (const result of results) {
      if (result.outcome === 'retry') retry.run(result.nextAttemptAtMs, result.eventId, token);
      else if (result.outcome === 'failed') fail.run(result.eventId, token);
    }
  };
  return {
    async settleAndClaim(token, results, { nowMs, leaseUntilMs, limit }) {
      if (results.length === 0 && limit === 0) return [];
      return db.transaction(() => {
        settle(token, results);
        if (limit === 0) return [];
        const claimed = claim.all(leaseUntilMs, token, nowMs, nowMs, limit);
        if (claimed.length === 0) return [];
        const rows = eventsById.all(JSON.stringify(claimed.map((row) => row.eventId)));
        const byId = new Map(rows.map((row) => [row.id, row]));
        // An event swept meanwhile took its outbox row with it (foreign key cascade).
        return claimed.flatMap(({ eventId, attempts }) => {
          const row = byId.get(eventId);
          if (row === undefined) return [];
          const { webhookId, ...event } = row;
          return [{ event, webhookId, attempts }];
        });
      });
    },
  };
}
