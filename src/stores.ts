import { sqliteCodeRequestStore } from './code-requests/store';
import type { Db } from './db/client';
import { sqliteEmailUpdateStore } from './email-update/store';
import { sqliteEmailVerificationStore } from './email-verification/store';
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
    totp: sqliteTotpStore(db, append),
    recoveryCode: sqliteRecoveryCodeStore(db, append),
    status: sqliteStatusStore(db),
    codeRequests: sqliteCodeRequestStore(db),
    events: sqliteEventStore(db, append),
    metrics: sqliteMetricsStore(db),
    webhooks: sqliteWebhookStore(db),
  };
}
export type Stores = ReturnType<typeof sqliteStores>;
