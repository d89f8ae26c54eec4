import { randomBytes } from 'node:crypto';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * The security events of API.md §12. AUTOINCREMENT, not a plain rowid: once the sweep has emptied
 * the table a rowid would start again at 1, and a reader's `after` cursor would skip the new events.
 * No foreign key to users: a user's events outlive the user until the retention sweep.
 */
/** `evt_` and 32 hex digits (128 random bits), the shape PostgreSQL's column default also gives. */
export function newWebhookId(): string {
  return `evt_${randomBytes(16).toString('hex')}`;
}

export const events = sqliteTable(
  'events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    time: integer('time').notNull(),
    type: text('type').notNull(),
    userId: text('user_id'),
    clientIp: text('client_ip'),
    /** The name of the service key whose request caused it (API.md §17); null for the sweeper, the import, expiry. */
    actor: text('actor'),
    /**
     * The webhook-id the event is sent under: random, so ids never repeat across deployments or after
     * a restore (the numeric id would). SQLite cannot add a column with a random default: '' is only
     * there for ALTER TABLE; inserts fill it (here, or with bulk.ts's WEBHOOK_ID_SQL in raw SQL), and a trigger
     * of migration 0006 gives any insert that left it '' one.
     */
    webhookId: text('webhook_id').notNull().default('').$defaultFn(newWebhookId),
  },
  (table) => [
    index('events_user').on(table.userId, table.id),
    index('events_type').on(table.type, table.id),
    index('events_time').on(table.time),
  ],
);

/**
 * The webhook outbox: one row per event to send, written in the event's own transaction and deleted
 * once a receiver acknowledged it. Times in milliseconds, so retries can be scheduled finely.
 */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    eventId: integer('event_id')
      .primaryKey()
      .references(() => events.id, { onDelete: 'cascade' }),
    /** 'pending' until delivered (the row is then deleted) or 'failed' after the retry window. */
    state: text('state').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAtMs: integer('next_attempt_at_ms').notNull().default(0),
    /** A claimed row belongs to `lease_token` until this time; then any sender may claim it again. */
    leaseUntilMs: integer('lease_until_ms').notNull().default(0),
    leaseToken: text('lease_token'),
  },
  (table) => [index('webhook_deliveries_due').on(table.state, table.nextAttemptAtMs)],
);

export type EventRow = typeof events.$inferSelect;
