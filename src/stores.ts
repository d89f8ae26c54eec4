import { sqliteCodeRequestStore } from './code-requests/store';
import type { Db } from './db/client';
import { sqliteEmailUpdateStore } from './email-update/store';
import { sqliteEmailVerificationStore } from './email-verification/store';
import { sqlitePasskeyStore } from './passkeys/store';
import { sqlitePasswordResetStore } from './password-reset/store';
import { sqlitePasswordStore } from './passwords/store';
import { sqliteRecoveryCodeStore } from './recovery-code/store';
import { sqliteStatusStore } from './status/store';
import { sqliteTotpStore } from './totp/store';
import { sqliteUserStore } from './users/store';

/** Every feature's store on one SQLite database. */
export function sqliteStores(db: Db) {
  return {
    users: sqliteUserStore(db),
    passwords: sqlitePasswordStore(db),
    passwordReset: sqlitePasswordResetStore(db),
    emailVerification: sqliteEmailVerificationStore(db),
    emailUpdate: sqliteEmailUpdateStore(db),
    totp: sqliteTotpStore(db),
    recoveryCode: sqliteRecoveryCodeStore(db),
    status: sqliteStatusStore(db),
    codeRequests: sqliteCodeRequestStore(db),
    passkeys: sqlitePasskeyStore(db),
  };
}
export type Stores = ReturnType<typeof sqliteStores>;
