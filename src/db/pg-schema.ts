import { sql } from 'drizzle-orm';
import { bigint, boolean, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { unixSeconds } from './pg-columns';

// The events and their webhook outbox live in a file of their own; drizzle-kit reads them through this one.
export * from './pg-schema-events';

// The PostgreSQL twin of schema.ts: same tables, columns and indexes.

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
    // What the user view shows of other tables, kept here by migration 0011's triggers (see schema.ts).
    registeredTotp: boolean('registered_totp').notNull().default(false),
    passkeyCount: integer('passkey_count').notNull().default(0),
  },
  (table) => [
    uniqueIndex('users_email_unique').on(table.email),
    index('users_created_at_id').on(table.createdAt, table.id),
    // Users awaiting password migration (API.md §19), counted per /metrics scrape; the literal is password-migration/model.ts's AWAITING_MIGRATION.
    index('users_awaiting_password_migration').on(table.id).where(sql`password_hash = '!awaiting-password-migration'`),
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

export type UserRow = typeof users.$inferSelect;
export type PasskeyRow = typeof passkeys.$inferSelect;
export type PasswordResetRequestRow = typeof passwordResetRequests.$inferSelect;
export type EmailUpdateRequestRow = typeof emailUpdateRequests.$inferSelect;
export type EmailVerificationRequestRow = typeof emailVerificationRequests.$inferSelect;
export type TotpCredentialRow = typeof totpCredentials.$inferSelect;

/** End-user API keys (API.md §18): see schema.ts. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    scopes: text('scopes').notNull(),
    secretHash: text('secret_hash').notNull(),
    start: text('start').notNull(),
    createdAt: unixSeconds('created_at').notNull(),
    expiresAt: unixSeconds('expires_at'),
    lastUsedAt: unixSeconds('last_used_at'),
  },
  (table) => [index('api_keys_user').on(table.userId, table.createdAt, table.id)],
);
export type ApiKeyRow = typeof apiKeys.$inferSelect;
