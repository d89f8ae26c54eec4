import { sql } from 'drizzle-orm';
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
    // The view's counts of other tables, kept by migration 0011's triggers: GET /users/{id} reads one row.
    registeredTotp: integer('registered_totp', { mode: 'boolean' }).notNull().default(false),
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
export const counters = sqliteTable('counters', {
  name: text('name').primaryKey(),
  value: integer('value').notNull().default(0),
});
