import type { Database } from 'bun:sqlite';
import { PasswordHasher } from '../../src/hashing/password-hash';
import { addressKey } from '../../src/limits/address-key';
import type { RateLimits } from '../../src/limits/rate-limit';
import { sha256Hex } from '../../src/security/digest';
import { encodeTotpKey, generateTotpCode, timeStep } from '../../src/security/totp';
import type { PgDb } from '../../src/db/pg-client';
import { type Harness, STRONG_PASSWORD } from '../support/harness';
import { execute } from '../support/rows';
import { generateApiKey } from '../../src/security/api-key-secret';
import { seedPasskeys } from './passkeys-seed';

/**
 * argon2 costs ~40 ms a hash, which would cap a fuzz run at a few hundred cases. The fuzzer targets
 * input handling, not the hash, so it swaps in a fast one with the same interface.
 */
export class FastHasher extends PasswordHasher {
  constructor() {
    super({ concurrency: 1, maxQueue: 0 });
  }
  override hash(password: string): Promise<string> {
    return Promise.resolve(fastHash(password));
  }
  override verify(password: string, hash: string): Promise<boolean> {
    return Promise.resolve(hash === fastHash(password));
  }
}
const fastHash = (password: string) => `fake$${sha256Hex(password)}`;

/** The fuzz clock never moves, so every code below stays valid (or expired) for the whole run. */
export const NOW_MS = Date.UTC(2026, 2, 1, 12, 0, 10);
const NOW = Math.floor(NOW_MS / 1000);

const id = (name: string) => `${name}${'2'.repeat(24)}`.slice(0, 24);
export const USERS = { bare: id('fzbare'), mail: id('fzmaiw'), totp: id('fztotp') };
/**
 * A disabled user (API.md §14), reached by logging in with its address and the right password
 * (USER_DISABLED). Not among USERS, so path ids keep naming the users whose successes the suite must reach.
 */
export const DISABLED_USER = id('fzqff');
export const RESETS = { open: id('fzresetqpen'), last: id('fzresetwast'), expired: id('fzresetexp') };
export const UPDATES = { fresh: id('fzupdnew'), taken: id('fzupdtaken'), last: id('fzupdwast'), expired: id('fzupdexp') };
export const SIGN_INS = { open: id('fzsignqpen'), last: id('fzsignwast'), expired: id('fzsignexp') };
export const RECOVERY_CODE = 'RECQVERYCQDE2345';
export const EMAILS = { mail: 'ada@example.com', totp: 'bob@example.com', fresh: 'ada.new@example.com', last: 'new-bob@example.com', off: 'off@example.com' };
export const CODES = {
  verifyMail: 'ADAVERF2',
  verifyTotpUser: 'BVERFQQ4',
  resetOpen: 'RESETQPN',
  resetLast: 'RESETZZ4',
  resetExpired: 'RESETXP2',
  updateFresh: 'UPDNEW22',
  updateTaken: 'UPDTAKEN',
  updateLast: 'UPDZZZZ4',
  updateExpired: 'UPDXP222',
  signInOpen: 'SGNQPEN2',
  signInLast: 'SGNZZZZ4',
  signInExpired: 'SGNXP222',
};

const keyBytes = (first: number) => Uint8Array.from({ length: 20 }, (_, i) => first + i);
const seededKey = keyBytes(1);
export const TOTP_KEYS = { seeded: encodeTotpKey(seededKey), other: encodeTotpKey(keyBytes(101)) };
const STEP = timeStep(NOW_MS);
/** The step before now was already used, so its code is a replay; now and the next step verify. */
const LAST_USED_STEP = STEP - 1;
const codesAround = (key: Uint8Array) => [-2, -1, 0, 1, 2].map((d) => generateTotpCode(key, NOW_MS + d * 30_000));
/** Codes of the steps now-2 to now+2 (index 2 is now) for each key. */
export const TOTP_CODES = { seeded: codesAround(seededKey), other: codesAround(keyBytes(101)) };

/** The mail user holds an end-user API key (API.md §18) that verifies, and may delete it. */
export const API_KEY = generateApiKey();

/** The mail user holds a passkey; the bare user may register one. */
export const PASSKEYS = await seedPasskeys({ owner: USERS.mail, newcomer: USERS.bare }, NOW);

const live = { created_at: NOW - 60, expires_at: NOW + 540 };
const expired = { created_at: NOW - 1200, expires_at: NOW - 600 };
const user = (userId: string, email: string | null, verified: boolean, disabled = false) => ({
  id: userId, created_at: NOW - 3600, email, email_verified: verified ? 1 : 0,
  password_hash: fastHash(STRONG_PASSWORD), recovery_code_hash: fastHash(RECOVERY_CODE), disabled: disabled ? 1 : 0, disabled_until: null,
});
const reset = (rid: string, userId: string, code: string, times: typeof live, failed: number, verified = false) => ({
  id: rid, user_id: userId, ...times, code_hash: sha256Hex(code), email_verified: verified ? 1 : 0, failed_attempts: failed,
});
const update = (rid: string, userId: string, email: string, code: string, times: typeof live, failed: number) => ({
  id: rid, user_id: userId, ...times, email, code, failed_attempts: failed,
});

const signIn = (rid: string, userId: string, email: string, code: string, times: typeof live, failed: number) => ({
  id: rid, user_id: userId, ...times, email, code_hash: sha256Hex(code), failed_attempts: failed,
});

/** Rows by table, inserted in this order (users first for the foreign keys). */
const SEED: Record<string, Record<string, unknown>[]> = {
  users: [user(USERS.bare, null, false), user(USERS.mail, EMAILS.mail, false), user(USERS.totp, EMAILS.totp, true), user(DISABLED_USER, EMAILS.off, true, true)],
  email_verification_requests: [
    { user_id: USERS.mail, ...live, code: CODES.verifyMail, failed_attempts: 0 },
    { user_id: USERS.totp, ...live, code: CODES.verifyTotpUser, failed_attempts: 4 },
  ],
  email_update_requests: [
    update(UPDATES.fresh, USERS.mail, EMAILS.fresh, CODES.updateFresh, live, 0),
    // Another user holds this address now: a right code answers EMAIL_ALREADY_USED.
    update(UPDATES.taken, USERS.mail, EMAILS.totp, CODES.updateTaken, live, 0),
    update(UPDATES.last, USERS.totp, EMAILS.last, CODES.updateLast, live, 4),
    update(UPDATES.expired, USERS.bare, 'late@example.com', CODES.updateExpired, expired, 0),
  ],
  password_reset_requests: [
    reset(RESETS.open, USERS.mail, CODES.resetOpen, live, 0),
    reset(RESETS.last, USERS.totp, CODES.resetLast, live, 4, true),
    reset(RESETS.expired, USERS.bare, CODES.resetExpired, expired, 0),
  ],
  email_sign_in_requests: [
    signIn(SIGN_INS.open, USERS.mail, EMAILS.mail, CODES.signInOpen, live, 0),
    signIn(SIGN_INS.last, USERS.totp, EMAILS.totp, CODES.signInLast, live, 4),
    signIn(SIGN_INS.expired, USERS.mail, EMAILS.mail, CODES.signInExpired, expired, 0),
  ],
  totp_credentials: [{ user_id: USERS.totp, created_at: NOW - 600, key: TOTP_KEYS.seeded, last_used_step: LAST_USED_STEP }],
  ...PASSKEYS.rows,
  api_keys: [{ id: API_KEY.id, user_id: USERS.mail, name: 'seeded key', scopes: 'repo:read', secret_hash: API_KEY.secretHash, start: API_KEY.start, created_at: NOW - 600 }],
};

/** Puts the database back to exactly the seed, so every case starts from the same state. */
export function seedResetter(sqlite: Database): () => void {
  const inserts = Object.entries(SEED).map(([table, rows]) => {
    const columns = Object.keys(rows[0]!);
    const statement = sqlite.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map((c) => `$${c}`).join(', ')})`);
    return () => rows.forEach((row) => statement.run(row as never));
  });
  const restore = sqlite.transaction(() => {
    // Deleting the users cascades to everything that belongs to them; events outlive users, so they go too.
    sqlite.run('delete from users');
    // Challenges of a login without a user belong to no one.
    sqlite.run('delete from challenges');
    sqlite.run('delete from events');
    for (const insert of inserts) insert();
  });
  return () => restore();
}

/**
 * seedResetter on the harness's own database, SQLite or PostgreSQL (for the suites that run on every
 * set-up): the same rows, with SQLite's 0/1 flags as PostgreSQL's booleans there.
 */
export function seedResetterOf(h: Harness): () => Promise<void> {
  if (h.setup === 'sqlite') {
    const restore = seedResetter(h.deps.db.$client);
    return async () => restore();
  }
  return async () => {
    const booleans = new Set(
      (await execute(h, "select table_name || '.' || column_name as name from information_schema.columns where data_type = 'boolean' and table_schema = 'public'")).map((row) => row.name as string),
    );
    const db = h.backend.db as PgDb;
    await db.$client.begin(async (tx) => {
      await tx.unsafe('delete from users');
      await tx.unsafe('delete from challenges');
      await tx.unsafe('delete from events');
      for (const [table, rows] of Object.entries(SEED)) {
        for (const row of rows) {
          const columns = Object.keys(row);
          const values = columns.map((column) => (booleans.has(`${table}.${column}`) ? Boolean(row[column]) : row[column]));
          await tx.unsafe(`insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`, values as never[]);
        }
      }
    });
  };
}

export type Snapshot = Map<string, Map<string, Record<string, unknown>>>;

/** Every table's rows, keyed by primary key, in rowid order. */
export function takeSnapshot(sqlite: Database): Snapshot {
  const tables = sqlite.query<{ name: string }, []>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name").all();
  const snapshot: Snapshot = new Map();
  for (const { name } of tables) {
    const pk = sqlite.query<{ name: string; pk: number }, []>(`pragma table_info("${name}")`).all().find((c) => c.pk === 1)?.name;
    const rows = sqlite.query<Record<string, unknown>, []>(`select * from "${name}" order by rowid`).all();
    snapshot.set(name, new Map(rows.map((row, i) => [pk === undefined ? String(i) : String(row[pk]), row])));
  }
  return snapshot;
}

/** Spends every limit of the seeded users and of the client_ip values the fuzzer sends, to reach TOO_MANY_REQUESTS. */
export async function exhaustLimits(limits: RateLimits, clientIps: string[]): Promise<void> {
  for (const userId of Object.values(USERS)) {
    for (const window of [limits.resetRequests, limits.emailVerificationRequests, limits.emailUpdateRequests, limits.emailSignInRequests]) for (let i = 0; i < 3; i++) await window.hit(userId);
    for (const lockout of [limits.totpVerify, limits.totpRegister, limits.reset2fa, limits.emailVerify, limits.emailUpdateVerify, limits.passkeyVerify]) for (let i = 0; i < 5; i++) await lockout.recordFailure(userId);
  }
  for (const ip of clientIps) {
    for (let i = 0; i < 5; i++) await limits.address.consume(addressKey(ip));
    for (let i = 0; i < 5; i++) await limits.loginBlock.recordFailure(addressKey(ip));
  }
}
