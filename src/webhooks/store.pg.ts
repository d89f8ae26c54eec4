import { and, eq, inArray, sql } from 'drizzle-orm';
import type { PgDb, PgTx } from '../db/pg-client';
import { events, webhookDeliveries as deliveries } from '../db/pg-schema';
import { inTransaction } from '../db/pg-transaction';
import type { StoredEvent } from '../events/model';
import type { AttemptResult } from './model';
import type { WebhookStore } from './store';

const held = (eventId: number, token: string) => and(eq(deliveries.eventId, eventId), eq(deliveries.leaseToken, token));

async function settle(tx: PgTx, token: string, results: readonly AttemptResult[]): Promise<void> {
  const delivered = results.filter((r) => r.outcome === 'delivered').map((r) => r.eventId);
  if (delivered.length > 0) await tx.delete(deliveries).where(inArray(deliveries.eventId, delivered));
  for (const result of results) {
    if (result.outcome === 'retry') {
      await tx.update(deliveries).set({ nextAttemptAtMs: result.nextAttemptAtMs, leaseUntilMs: 0, leaseToken: null }).where(held(result.eventId, token));
    } else if (result.outcome === 'failed') {
      await tx.update(deliveries).set({ state: 'failed', leaseUntilMs: 0, leaseToken: null }).where(held(result.eventId, token));
    }
  }
}

/**
 * The PostgreSQL twin of sqliteWebhookStore. The claim locks the due rows it picks with FOR UPDATE
 * SKIP LOCKED, so the senders of several instances take different rows side by side instead of
 * waiting for each other, and each event goes out from one of them.
 */
export function postgresWebhookStore(db: PgDb): WebhookStore {
  return {
    async settleAndClaim(token, results, { nowMs, leaseUntilMs, limit }) {
      if (results.length === 0 && limit === 0) return [];
      return inTransaction(db, async (tx) => {
        await settle(tx, token, results);
        if (limit === 0) return [];
        const claimed = (await tx.execute(sql`update ${deliveries}
          set lease_until_ms = ${leaseUntilMs}, lease_token = ${token}, attempts = attempts + 1
          where event_id in (
            select event_id from ${deliveries}
            where state = 'pending' and next_attempt_at_ms <= ${nowMs} and lease_until_ms <= ${nowMs}
            order by next_attempt_at_ms, event_id limit ${limit} for update skip locked)
          returning event_id, attempts`)) as unknown as { event_id: string | number; attempts: number }[];
        if (claimed.length === 0) return [];
        const ids = claimed.map((row) => Number(row.event_id));
        const rows = await tx.select().from(events).where(inArray(events.id, ids));
        const byId = new Map(rows.map((row) => [row.id, row]));
        // An event swept meanwhile took its outbox row with it (foreign key cascade).
        return claimed.flatMap((row) => {
          const found = byId.get(Number(row.event_id));
          if (found === undefined) return [];
          const { webhookId, ...event }: StoredEvent & { webhookId: string } = found;
          return [{ event, webhookId, attempts: row.attempts }];
        });
      });
    },
  };
}
