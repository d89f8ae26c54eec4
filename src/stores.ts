import { postgresCodeRequestStore } from './code-requests/store.pg';
import { postgresEmailUpdateStore } from './email-update/store.pg';
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

/** A request answers 503 within 2 s of PostgreSQL going away (API.md §10): connection 1 s, statement 1.5 s, this. */
const POSTGRES_DEADLINE_MS = 1800;

/** Every feature's store on one PostgreSQL database, each call bounded and mapped to UNAVAILABLE. */
export function postgresStores(db: PgDb): Stores {
  const guard = <T extends object>(store: T) => asAvailableStore(store, POSTGRES_DEADLINE_MS) as T;
  return {
    users: guard(postgresUserStore(db)),
    passwords: guard(postgresPasswordStore(db)),
    passwordReset: guard(postgresPasswordResetStore(db)),
    emailVerification: guard(postgresEmailVerificationStore(db)),
    emailUpdate: guard(postgresEmailUpdateStore(db)),
    totp: guard(postgresTotpStore(db)),
    recoveryCode: guard(postgresRecoveryCodeStore(db)),
    status: guard(postgresStatusStore(db)),
    codeRequests: guard(postgresCodeRequestStore(db)),
    passkeys: guard(postgresPasskeyStore(db)),
  };
}
