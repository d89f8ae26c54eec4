import { createHash } from 'node:crypto';
import journal from '../../drizzle/meta/_journal.json';
import init from '../../drizzle/0000_init.sql' with { type: 'text' };
import userCountTriggers from '../../drizzle/0001_user_count_triggers.sql' with { type: 'text' };
import emailVerificationExpiresIndex from '../../drizzle/0002_email_verification_expires_index.sql' with { type: 'text' };
import passkeys from '../../drizzle/0003_passkeys.sql' with { type: 'text' };
import eventsAndWebhookOutbox from '../../drizzle/0004_events_and_webhook_outbox.sql' with { type: 'text' };
import userDisabled from '../../drizzle/0005_user_disabled.sql' with { type: 'text' };
import eventWebhookId from '../../drizzle/0006_event_webhook_id.sql' with { type: 'text' };
import emailSignInRequests from '../../drizzle/0007_email_sign_in_requests.sql' with { type: 'text' };
import usersAwaitingPasswordMigration from '../../drizzle/0008_users_awaiting_password_migration.sql' with { type: 'text' };
import eventActor from '../../drizzle/0009_event_actor.sql' with { type: 'text' };
import apiKeys from '../../drizzle/0010_api_keys.sql' with { type: 'text' };
import userViewColumns from '../../drizzle/0011_user_view_columns.sql' with { type: 'text' };

/**
 * drizzle-kit's SQL files, imported as text so the compiled binary carries them.
 * A new migration needs one line here; test/migrations.test.ts fails until it is added.
 */
export const migrationSqlByTag: Record<string, string> = {
  '0000_init': init,
  '0001_user_count_triggers': userCountTriggers,
  '0002_email_verification_expires_index': emailVerificationExpiresIndex,
  '0003_passkeys': passkeys,
  '0004_events_and_webhook_outbox': eventsAndWebhookOutbox,
  '0005_user_disabled': userDisabled,
  '0006_event_webhook_id': eventWebhookId,
  '0007_email_sign_in_requests': emailSignInRequests,
  '0008_users_awaiting_password_migration': usersAwaitingPasswordMigration,
  '0009_event_actor': eventActor,
  '0010_api_keys': apiKeys,
  '0011_user_view_columns': userViewColumns,
};

export interface MigrationMeta {
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

/** The same records drizzle's file-based migrator builds, so its bookkeeping table stays compatible. */
export function embeddedMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = migrationSqlByTag[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is not embedded in src/db/migrations.ts`);
    return {
      sql: text.split('--> statement-breakpoint'),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash('sha256').update(text).digest('hex'),
    };
  });
}
