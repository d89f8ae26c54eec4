import { createHash } from 'node:crypto';
import journal from '../../drizzle/pg/meta/_journal.json';
import init from '../../drizzle/pg/0000_init.sql' with { type: 'text' };
import userCountTriggers from '../../drizzle/pg/0001_user_count_triggers.sql' with { type: 'text' };
import passkeys from '../../drizzle/pg/0002_passkeys.sql' with { type: 'text' };
import eventsAndWebhookOutbox from '../../drizzle/pg/0003_events_and_webhook_outbox.sql' with { type: 'text' };
import userCountByCaller from '../../drizzle/pg/0004_user_count_by_caller.sql' with { type: 'text' };
import userDisabled from '../../drizzle/pg/0005_user_disabled.sql' with { type: 'text' };
import eventWebhookId from '../../drizzle/pg/0006_event_webhook_id.sql' with { type: 'text' };
import emailSignInRequests from '../../drizzle/pg/0007_email_sign_in_requests.sql' with { type: 'text' };
import usersAwaitingPasswordMigration from '../../drizzle/pg/0008_users_awaiting_password_migration.sql' with { type: 'text' };
import eventActor from '../../drizzle/pg/0009_event_actor.sql' with { type: 'text' };
import apiKeys from '../../drizzle/pg/0010_api_keys.sql' with { type: 'text' };
import userViewColumns from '../../drizzle/pg/0011_user_view_columns.sql' with { type: 'text' };

/**
 * drizzle-kit's PostgreSQL SQL files (`bun run db:generate:pg`), imported as text so the compiled
 * binary carries them. A new migration needs one line here; test/pg-migrations.test.ts fails until it is added.
 */
export const pgMigrationSqlByTag: Record<string, string> = {
  '0000_init': init,
  '0001_user_count_triggers': userCountTriggers,
  '0002_passkeys': passkeys,
  '0003_events_and_webhook_outbox': eventsAndWebhookOutbox,
  '0004_user_count_by_caller': userCountByCaller,
  '0005_user_disabled': userDisabled,
  '0006_event_webhook_id': eventWebhookId,
  '0007_email_sign_in_requests': emailSignInRequests,
  '0008_users_awaiting_password_migration': usersAwaitingPasswordMigration,
  '0009_event_actor': eventActor,
  '0010_api_keys': apiKeys,
  '0011_user_view_columns': userViewColumns,
};

export interface PgMigrationMeta {
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

/** The records drizzle's folder migrator builds (readMigrationFiles), so its bookkeeping table stays compatible. */
export function embeddedPgMigrations(): PgMigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = pgMigrationSqlByTag[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is not embedded in src/db/pg-migrations.ts`);
    return {
      sql: text.split('--> statement-breakpoint'),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash('sha256').update(text).digest('hex'),
    };
  });
}
