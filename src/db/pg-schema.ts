import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';

// The PostgreSQL twin of schema.ts: same tables, columns and indexes. Times stay Unix seconds, as
// bigint so they outlive 2038; mode 'number' because Bun.SQL returns int8 as a string otherwise.
const unixSeconds = (name: string) => bigint(name, { mode: 'number' });

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    createdAt: unixSeconds('created_at').notNull(),
    email: text('email'),
    emailVerified: boolean('email_verified').notNull().default(false),
    passwordHash: text('password_hash').notNull(),
    recoveryCodeHash: text('recovery_code_hash').notNull(),
    // API.md §14: disabled_until null = until enabled; once it has passed the user is enabled again, with no write.
    disabled: boolean('disabled').notNull().default(false),
    disabledUntil: unixSeconds('disabled_until'),
    // What the user view shows of other tables, kept here by migration 0008's triggers (see schema.ts).
    registeredTotp: boolean('registered_totp').notNull().default(false),
    passkeyCount: integer('passkey_count').notNull().default(0),
  },
  (table) => [
    uniqueIndex('users_email_unique').on(table.email),
    index('users_created_at_id').on(table.createdAt, table.id),
  ],
);

/** Maintained by triggers so that listing users never needs a COUNT(*) scan. */
export const counters = pgTable('counters', {
  name: text('name').primaryKey(),
  value: bigint('value', { mode: 'number' }).notNull().default(0),
});

/** What every code-carrying request has: when it was made, when it lapses, and its wrong codes so far. */
const requestLifetimeColumns = () => ({
  createdAt: unixSeconds('created_at').notNull(),
  expiresAt: unixSeconds('expires_at').notNull(),
  failedAttempts: integer('failed_attempts').notNull().default(0),
});

export const emailVerificationRequests = pgTable(
  'email_verification_requests',
  {
    userId: text('user_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...requestLifetimeColumns(),
    // Returned by GET (API.md §3), so it is kept as issued rather than hashed.
    code: text('code').notNull(),
  },
  // The sweep looks for expired rows; without this it would scan every pending request.
  (table) => [index('email_verification_requests_expires').on(table.expiresAt)],
);

export const emailUpdateRequests = pgTable(
  'email_update_requests',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...requestLifetimeColumns(),
    email: text('email').notNull(),
    code: text('code').notNull(),
  },
  (table) => [
    index('email_update_requests_user').on(table.userId, table.createdAt, table.id),
    index('email_update_requests_email').on(table.email),
    index('email_update_requests_expires').on(table.expiresAt),
  ],
);

export const passwordResetRequests = pgTable(
  'password_reset_requests',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...requestLifetimeColumns(),
    codeHash: text('code_hash').notNull(),
    emailVerified: boolean('email_verified').notNull().default(false),
  },
  (table) => [
    index('password_reset_requests_user').on(table.userId, table.createdAt, table.id),
    index('password_reset_requests_expires').on(table.expiresAt),
  ],
);

/** Sign in with an emailed code (API.md §15): `email` is where the code went; the code is kept only as a hash. */
export const emailSignInRequests = pgTable(
  'email_sign_in_requests',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...requestLifetimeColumns(),
    email: text('email').notNull(),
    codeHash: text('code_hash').notNull(),
  },
  (table) => [
    index('email_sign_in_requests_user').on(table.userId, table.createdAt, table.id),
    index('email_sign_in_requests_expires').on(table.expiresAt),
  ],
);

export const totpCredentials = pgTable('totp_credentials', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: unixSeconds('created_at').notNull(),
  key: text('key').notNull(),
  lastUsedStep: bigint('last_used_step', { mode: 'number' }).notNull(),
});

export const passkeys = pgTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    /** Up to 2^32 - 1 (the authenticator's 32-bit sign count). */
    counter: bigint('counter', { mode: 'number' }).notNull(),
    transports: text('transports').notNull(),
    backedUp: boolean('backed_up').notNull(),
    name: text('name').notNull(),
    createdAt: unixSeconds('created_at').notNull(),
    lastUsedAt: unixSeconds('last_used_at'),
  },
  (table) => [
    uniqueIndex('passkeys_credential_id_unique').on(table.credentialId),
    index('passkeys_user').on(table.userId, table.createdAt, table.id),
  ],
);

/** Single-use WebAuthn challenges, bound to their ceremony, purpose and (when given) user. */
export const challenges = pgTable(
  'challenges',
  {
    id: text('id').primaryKey(),
    ceremony: text('ceremony', { enum: ['registration', 'authentication'] }).notNull(),
    purpose: text('purpose', { enum: ['login', 'second_factor'] }),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    challenge: text('challenge').notNull(),
    userVerification: text('user_verification', { enum: ['required', 'preferred'] }).notNull(),
    expiresAt: unixSeconds('expires_at').notNull(),
  },
  (table) => [index('challenges_expires').on(table.expiresAt), index('challenges_user').on(table.userId)],
);

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

export type UserRow = typeof users.$inferSelect;
export type PasskeyRow = typeof passkeys.$inferSelect;
export type PasswordResetRequestRow = typeof passwordResetRequests.$inferSelect;
export type EmailUpdateRequestRow = typeof emailUpdateRequests.$inferSelect;
export type EmailVerificationRequestRow = typeof emailVerificationRequests.$inferSelect;
export type TotpCredentialRow = typeof totpCredentials.$inferSelect;
