import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './schema-users';

// The users, the counters, the events and their webhook outbox live in files of their own (this one
// stays short); drizzle-kit and the stores see them here.
export * from './schema-users';
export * from './schema-events';

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

export type UserRow = typeof users.$inferSelect;
export type PasswordResetRequestRow = typeof passwordResetRequests.$inferSelect;
export type EmailUpdateRequestRow = typeof emailUpdateRequests.$inferSelect;
export type EmailVerificationRequestRow = typeof emailVerificationRequests.$inferSelect;
export type TotpCredentialRow = typeof totpCredentials.$inferSelect;
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

/**
 * End-user API keys (API.md §18). The key itself is never stored: `secret_hash` is the SHA-256 (hex) of
 * its random part, found by the key's id, which the key carries. `scopes` holds the scope words joined
 * by spaces (a scope has none); `start` is the key's first 12 characters, for display.
 */
export const apiKeys = sqliteTable(
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
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at'),
    lastUsedAt: integer('last_used_at'),
  },
  (table) => [index('api_keys_user').on(table.userId, table.createdAt, table.id)],
);
export type ApiKeyRow = typeof apiKeys.$inferSelect;
