import { sql } from 'drizzle-orm';
import { bigint, index, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { unixSeconds } from './pg-columns';

/**
 * Security events (API.md §12). Ids come from an identity, never reused. Appenders commit in
 * parallel, so ids may commit out of order; the reader passes only ids whose writers have all ended
 * (events/store.pg.ts), so a client paging with `after` sees them in increasing order and skips none.
 */
export const events = pgTable(
  'events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    time: unixSeconds('time').notNull(),
    type: text('type').notNull(),
    userId: text('user_id'),
    clientIp: text('client_ip'),
    /** The name of the service key whose request caused it (API.md §17); null for the sweeper, the import, expiry. */
    actor: text('actor'),
    /** The webhook-id it is sent under (see schema.ts): 128-bit UUID v4 as 32 hex digits, drawn for every row, old ones included. */
    webhookId: text('webhook_id').notNull().default(sql`('evt_' || replace(gen_random_uuid()::text, '-', ''))`),
  },
  (table) => [
    index('events_user').on(table.userId, table.id),
    index('events_type').on(table.type, table.id),
    index('events_time').on(table.time),
  ],
);

/** The webhook outbox: one row per event to send, written in the event's own transaction. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    eventId: bigint('event_id', { mode: 'number' })
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAtMs: bigint('next_attempt_at_ms', { mode: 'number' }).notNull().default(0),
    leaseUntilMs: bigint('lease_until_ms', { mode: 'number' }).notNull().default(0),
    leaseToken: text('lease_token'),
  },
  (table) => [index('webhook_deliveries_due').on(table.state, table.nextAttemptAtMs)],
);
