import { postgresApiKeyStore } from './api-keys/store.pg';
import { sqliteApiKeyStore } from './api-keys/store';
import { postgresCodeRequestStore } from './code-requests/store.pg';
import { postgresEmailSignInStore } from './email-sign-in/store.pg';
import { postgresEmailUpdateStore } from './email-update/store.pg';
import { postgresEventAppender, postgresEventStore } from './events/store.pg';
import { postgresMetricsStore } from './metrics/store.pg';
import { postgresWebhookStore } from './webhooks/store.pg';
import { postgresEmailVerificationStore } from './email-verification/store.pg';
import { postgresPasskeyStore } from './passkeys/store.pg';
import { postgresPasswordResetStore } from './password-reset/store.pg';
import { postgresPasswordStore } from './passwords/store.pg';
import { postgresRecoveryCodeStore } from './recovery-code/store.pg';
import { postgresStatusStore } from './status/store.pg';
import { postgresTotpStore } from './totp/store.pg';
import { postgresUserStore } from './users/store.pg';
import { sqliteCodeRequestStore } from './code-requests/store';
import type { Db } from './db/client';
import type { PgDb } from './db/pg-client';
import { asAvailableStore } from './db/pg-deadline';
import { sqliteEmailSignInStore } from './email-sign-in/store';
import { sqliteEmailUpdateStore } from './email-update/store';
import { sqliteEmailVerificationStore } from './email-verification/store';
import { sqlitePasskeyStore } from './passkeys/store';
import { eventAppender, sqliteEventStore } from './events/store';
import { sqliteMetricsStore } from './metrics/store';
import { sqlitePasswordResetStore } from './password-reset/store';
import { sqlitePasswordStore } from './passwords/store';
import { sqliteRecoveryCodeStore } from './recovery-code/store';
import { sqliteStatusStore } from './status/store';
import { sqliteTotpStore } from './totp/store';
import { sqliteUserStore } from './users/store';
import { sqliteWebhookStore } from './webhooks/store';

/**
 * Every feature's store on one SQLite database. Stores that change state append their events in the
 * same transaction; with `webhookOutbox` each event also gets its webhook delivery row there.
 */
export function sqliteStores(db: Db, options: { webhookOutbox?: boolean; onOutboxWrite?: () => void } = {}) {
  const append = eventAppender({ outbox: options.webhookOutbox ?? false, onOutboxWrite: options.onOutboxWrite });
  return {
    users: sqliteUserStore(db, append),
    passwords: sqlitePasswordStore(db, append),
    passwordReset: sqlitePasswordResetStore(db, append),
    emailVerification: sqliteEmailVerificationStore(db, append),
    emailUpdate: sqliteEmailUpdateStore(db, append),
    emailSignIn: sqliteEmailSignInStore(db, append),
    totp: sqliteTotpStore(db, append),
    recoveryCode: sqliteRecoveryCodeStore(db, append),
    status: sqliteStatusStore(db),
    codeRequests: sqliteCodeRequestStore(db),
    passkeys: sqlitePasskeyStore(db, append),
    apiKeys: sqliteApiKeyStore(db, append),
    events: sqliteEventStore(db, append),
    metrics: sqliteMetricsStore(db),
    webhooks: sqliteWebhookStore(db),
  };
}
export type Stores = ReturnType<typeof sqliteStores>;

/** A request answers 503 within 2 s of PostgreSQL going away (API.md §10): connection 1 s, statement 1.5 s, this. */
const POSTGRES_DEADLINE_MS = 1800;

/**
 * Every feature's store on one PostgreSQL database, each call bounded and mapped to UNAVAILABLE;
 * events and the webhook outbox as on SQLite.
 */
export function postgresStores(db: PgDb, options: { webhookOutbox?: boolean; onOutboxWrite?: () => void } = {}): Stores {
  const append = postgresEventAppender({ outbox: options.webhookOutbox ?? false, onOutboxWrite: options.onOutboxWrite });
  const guard = <T extends object>(store: T) => asAvailableStore(store, POSTGRES_DEADLINE_MS) as T;
  return {
    users: guard(postgresUserStore(db, append)),
    passwords: guard(postgresPasswordStore(db, append)),
    passwordReset: guard(postgresPasswordResetStore(db, append)),
    emailVerification: guard(postgresEmailVerificationStore(db, append)),
    emailUpdate: guard(postgresEmailUpdateStore(db, append)),
    emailSignIn: guard(postgresEmailSignInStore(db, append)),
    totp: guard(postgresTotpStore(db, append)),
    recoveryCode: guard(postgresRecoveryCodeStore(db, append)),
    status: guard(postgresStatusStore(db)),
    codeRequests: guard(postgresCodeRequestStore(db)),
    passkeys: guard(postgresPasskeyStore(db, append)),
    apiKeys: guard(postgresApiKeyStore(db, append)),
    events: guard(postgresEventStore(db, append)),
    metrics: guard(postgresMetricsStore(db)),
    webhooks: guard(postgresWebhookStore(db)),
  };
}
