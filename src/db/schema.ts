import { randomBytes } from 'node:crypto';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    createdAt: integer('created_at').notNull(),
    email: text('email'),
    emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
    passwordHash: text('password_hash').notNull(),
    recoveryCodeHash: text('recovery_code_hash').notNull(),
    // API.md §14: disabled_until null = until enabled; once it has passed the user is enabled again, with no write.
    disabled: integer('disabled', { mode: 'boolean' }).notNull().default(false),
    disabledUntil: integer('disabled_until'),
    // The view's counts of other tables, kept by migration 0008's triggers: GET /users/{id} reads one row.
    registeredTotp: integer('registered_totp', { mode: 'boolean' }).notNull().default(false),
    passkeyCount: integer('passkey_count').notNull().default(0),
  },
  (table) => [
    uniqueIndex('users_email_unique').on(table.email),
    index('users_created_at_id').on(table.createdAt, table.id),
  ],
);

/** Maintained by triggers so that listing users never needs a COUNT(*) scan. */
export const counters = sqliteTable('counters', {
  name: text('name').primaryKey(),
  value: integer('value').notNull().default(0),
});

/** What every code-carrying request has: when it was made, when it lapses, and its wrong codes so far. */
const requestLifetimeColumns = () => ({
  createdAt: integer('created_at').notNull(),
  expiresAt: integer('expires_at').notNull(),
  failedAttempts: integer('failed_attempts').notNull().default(0),
});

export const emailVerificationRequests = sqliteTable(
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

export const emailUpdateRequests = sqliteTable(
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

export const passwordResetRequests = sqliteTable(
  'password_reset_requests',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...requestLifetimeColumns(),
    codeHash: text('code_hash').notNull(),
    emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
  },
  (table) => [
    index('password_reset_requests_user').on(table.userId, table.createdAt, table.id),
    index('password_reset_requests_expires').on(table.expiresAt),
  ],
);

/** Sign in with an emailed code (API.md §15): `email` is where the code went; the code is kept only as a hash. */
export const emailSignInRequests = sqliteTable(
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

export const totpCredentials = sqliteTable('totp_credentials', {
  userId: text('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: integer('created_at').notNull(),
  key: text('key').notNull(),
  lastUsedStep: integer('last_used_step').notNull(),
});

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

export type UserRow = typeof users.$inferSelect;
export type PasswordResetRequestRow = typeof passwordResetRequests.$inferSelect;
export type EmailUpdateRequestRow = typeof emailUpdateRequests.$inferSelect;
export type EmailVerificationRequestRow = typeof emailVerificationRequests.$inferSelect;
export type TotpCredentialRow = typeof totpCredentials.$inferSelect;
export type EventRow = typeof events.$inferSelect;
/**
 * A user's WebAuthn credentials (API.md §13). The credential id and public key are base64url as the
 * library hands them over; `transports` is a comma-separated list of known values.
 */
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text('credential_id').notNull(),
    publicKey: text('public_key').notNull(),
    /** Up to 2^32 - 1 (the authenticator's 32-bit sign count): a PostgreSQL column needs bigint. */
    counter: integer('counter').notNull(),
    transports: text('transports').notNull(),
    backedUp: integer('backed_up', { mode: 'boolean' }).notNull(),
    name: text('name').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (table) => [
    uniqueIndex('passkeys_credential_id_unique').on(table.credentialId),
    index('passkeys_user').on(table.userId, table.createdAt, table.id),
  ],
);

/** Single-use WebAuthn challenges, bound to their ceremony, purpose and (when given) user. */
export const challenges = sqliteTable(
  'challenges',
  {
    id: text('id').primaryKey(),
    ceremony: text('ceremony', { enum: ['registration', 'authentication'] }).notNull(),
    /** Authentication only: a passwordless login or a second factor. */
    purpose: text('purpose', { enum: ['login', 'second_factor'] }),
    userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
    challenge: text('challenge').notNull(),
    userVerification: text('user_verification', { enum: ['required', 'preferred'] }).notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  // The sweep looks for expired rows; deleting a user looks for its challenges.
  (table) => [index('challenges_expires').on(table.expiresAt), index('challenges_user').on(table.userId)],
);
export type PasskeyRow = typeof passkeys.$inferSelect;
export type ChallengeRow = typeof challenges.$inferSelect;
