import type { Database } from 'bun:sqlite';
import type { Db } from '../db/client';
import { isKeyConflict } from '../db/constraints';
import { beginBulkWrites, DEFAULT_PACING, inBatches, inSavepoint, pacedWrites, userCountPause, withoutUserCountTrigger, type WritePacing, WEBHOOK_ID_SQL } from '../db/bulk';
import { beginLoadAlone, loadAlone, LOAD_WHILE_READING_CACHE_SIZE } from '../db/bulk-load';
import { COUNT_PROBLEM_LINES, COUNT_WRITABLE, STAGING_CHECKS, TAKEN_FIELD } from '../db/staging-checks';
import { API_KEY_COLUMNS, IN_RANGE, lineWriter, LOADED, PASSKEY_COLUMNS, rowInserter, USER_COLUMNS } from '../db/staging-writes';
import { type TransferApiKey, toTransferApiKeys } from '../api-keys/model';
import { type LineProblem, type ProblemRow, type StagedUser, toProblem, type TransferPasskey, toTransferPasskeys, type TransferUser, type UniqueField } from './model';
import type { CommitOptions, CommitResult, DirectLoad, ImportStaging, TransferStore } from './service';

type ExportRow = Omit<TransferUser, 'emailVerified' | 'disabled' | 'passkeys' | 'apiKeys'> & { emailVerified: number; disabled: number; passkeys: string | null; apiKeys: string | null };
const toTransferUser = (row: ExportRow): TransferUser =>
  ({ ...row, emailVerified: row.emailVerified === 1, disabled: row.disabled === 1, passkeys: toTransferPasskeys(row.passkeys), apiKeys: toTransferApiKeys(row.apiKeys) });

const EXPORT = `SELECT u.id, u.created_at AS createdAt, u.email, u.email_verified AS emailVerified, u.password_hash AS passwordHash,
    u.recovery_code_hash AS recoveryCodeHash, u.disabled, u.disabled_until AS disabledUntil, t.key AS totpKey, t.last_used_step AS totpLastStep,
    (SELECT json_group_array(json_object('id', p.id, 'credentialId', p.credential_id, 'publicKey', p.public_key, 'counter', p.counter,
       'transports', p.transports, 'backedUp', p.backed_up, 'name', p.name, 'createdAt', p.created_at, 'lastUsedAt', p.last_used_at)
       ORDER BY p.created_at, p.id) FROM passkeys p WHERE p.user_id = u.id HAVING count(*) > 0) AS passkeys,
    (SELECT json_group_array(json_object('id', a.id, 'name', a.name, 'scopes', a.scopes, 'secretHash', a.secret_hash, 'start', a.start, 'createdAt', a.created_at,
       'expiresAt', a.expires_at, 'lastUsedAt', a.last_used_at) ORDER BY a.created_at, a.id) FROM api_keys a WHERE a.user_id = u.id HAVING count(*) > 0) AS apiKeys
  FROM users u LEFT JOIN totp_credentials t ON t.user_id = u.id ORDER BY u.created_at, u.id`;

export function sqliteTransferStore(db: Db, pacing: WritePacing = DEFAULT_PACING): TransferStore {
  const sqlite = db.$client;
  return {
    async exportUsers(batchSize) {
      sqlite.exec('BEGIN'); // deferred: the count below opens the snapshot the rows are read from
      const total = (sqlite.query("SELECT value FROM counters WHERE name = 'users'").get() as { value: number } | null)?.value ?? 0;
      const rows = sqlite.query(EXPORT).iterate() as IterableIterator<ExportRow>;
      const snapshot = (function* () {
        try {
          yield* rows;
        } finally {
          sqlite.exec('COMMIT'); // ends the snapshot, also when the reader stops early
        }
      })();
      return { total, batches: inBatches(snapshot, batchSize, toTransferUser) };
    },

    startImport: async () => stagingOn(sqlite, pacing),
    startDirectLoad: async (now) => directLoad(sqlite, now),
    async backup(path) {
      // VACUUM INTO reads one snapshot, like any reader in WAL mode: writers go on meanwhile.
      sqlite.query('VACUUM INTO ?').run(path);
    },
  };
}

/** A private temporary database (`ATTACH ''`): SQLite deletes its file when closed, even after a crash. */
function stagingOn(sqlite: Database, pacing: WritePacing): ImportStaging {
  sqlite.exec(`ATTACH '' AS staging; PRAGMA staging.cache_size = -8000; PRAGMA staging.journal_mode = OFF;
    CREATE TABLE staging.staged_users (line INTEGER PRIMARY KEY, id TEXT NOT NULL, created_at INTEGER NOT NULL, email TEXT,
      email_verified INTEGER NOT NULL, password_hash TEXT NOT NULL, recovery_code_hash TEXT NOT NULL, totp_key TEXT, totp_last_step INTEGER, disabled INTEGER NOT NULL, disabled_until INTEGER);
    CREATE TABLE staging.staged_passkeys (line INTEGER NOT NULL, position INTEGER NOT NULL, id TEXT NOT NULL, credential_id TEXT NOT NULL,
      public_key TEXT NOT NULL, counter INTEGER NOT NULL, transports TEXT NOT NULL, backed_up INTEGER NOT NULL, name TEXT NOT NULL,
      created_at INTEGER NOT NULL, last_used_at INTEGER, PRIMARY KEY (line, position));
    CREATE TABLE staging.staged_api_keys (line INTEGER NOT NULL, position INTEGER NOT NULL, ${API_KEY_COLUMNS} TEXT, PRIMARY KEY (line, position));
    CREATE TABLE staging.staged_problems (line INTEGER NOT NULL, field TEXT, kind TEXT NOT NULL, detail TEXT, first_line INTEGER);
    CREATE INDEX staging.staged_problems_line ON staged_problems (line)`);
  const stageUser = sqlite.prepare('INSERT INTO staged_users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const stagePasskey = sqlite.prepare('INSERT INTO staged_passkeys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const stageApiKey = sqlite.prepare('INSERT INTO staged_api_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const stageProblem = sqlite.prepare('INSERT INTO staged_problems VALUES (?, ?, ?, ?, ?)');
  const addProblems = (problems: LineProblem[]) =>
    problems.forEach((p) => stageProblem.run(p.line, p.field, p.kind, p.kind === 'invalid' ? p.detail : null, p.kind === 'repeats' ? p.firstLine : null));
  const add = sqlite.transaction((users: StagedUser[], problems: LineProblem[]) => {
    for (const u of users) {
      stageUser.run(u.line, u.id, u.createdAt, u.email, u.emailVerified ? 1 : 0, u.passwordHash, u.recoveryCodeHash, u.totpKey, u.totpLastStep, u.disabled ? 1 : 0, u.disabledUntil);
      u.passkeys.forEach((p, i) =>
        stagePasskey.run(u.line, i, ...passkeyValues(p)),
      );
      u.apiKeys.forEach((k, i) => stageApiKey.run(u.line, i, ...apiKeyValues(k)));
    }
    addProblems(problems);
  });

  return {
    add: async (users, problems) => add(users, problems),
    async findConflicts() {
      sqlite.exec(`CREATE INDEX staging.staged_users_id ON staged_users (id); CREATE INDEX staging.staged_users_email ON staged_users (email);
        CREATE INDEX staging.staged_passkeys_id ON staged_passkeys (id); CREATE INDEX staging.staged_passkeys_credential ON staged_passkeys (credential_id);
        CREATE INDEX staging.staged_api_keys_id ON staged_api_keys (id)`);
      sqlite.transaction(() => STAGING_CHECKS.forEach((check) => sqlite.run(check)))();
    },
    problems: (batchSize) => {
      const rows = sqlite.query('SELECT line, kind, field, detail, first_line AS firstLine FROM staged_problems ORDER BY line, rowid').iterate();
      return inBatches(rows as Iterator<ProblemRow>, batchSize, toProblem);
    },
    async counts() {
      const one = (query: string) => (sqlite.query(query).get() as { n: number }).n;
      return { problemLines: one(COUNT_PROBLEM_LINES), writable: one(COUNT_WRITABLE) };
    },
    commit: async (options) => {
      const result = await writePaced(sqlite, pacing, options);
      addProblems(result.conflicts);
      return result;
    },
    async close() {
      sqlite.exec('DETACH staging');
    },
  };
}

/** A passkey's and an API key's values in PASSKEY_COLUMNS and API_KEY_COLUMNS order, staged or written. */
const passkeyValues = (p: TransferPasskey) => [p.id, p.credentialId, p.publicKey, p.counter, p.transports.join(','), p.backedUp ? 1 : 0, p.name, p.createdAt, p.lastUsedAt];
const apiKeyValues = (k: TransferApiKey) => [k.id, k.name, k.scopes.join(' '), k.secretHash, k.start, k.createdAt, k.expiresAt, k.lastUsedAt];

/** A first import written as it is read, in one transaction (db/bulk-load.ts); a taken key ends it, keeping nothing. */
function directLoad(sqlite: Database, now: number): DirectLoad | null {
  const load = beginLoadAlone(sqlite, LOADED, LOAD_WHILE_READING_CACHE_SIZE);
  if (load === null) return null;
  const write = userWriter(sqlite, now);
  const resumeCount = userCountPause(sqlite)();
  let written = 0;
  /** False when a key was taken: OR ROLLBACK has ended the transaction, and the load ends with it. */
  const keysFree = (run: () => void) => {
    try {
      run();
      return true;
    } catch (error) {
      load.end();
      if (isKeyConflict(error)) return false;
      throw error;
    }
  };
  return {
    add: (users) => keysFree(() => (write(users), (written += users.length))),
    finish: () => keysFree(() => (resumeCount(written), load.finish(), load.end())),
    abandon: () => load.end(),
  };
}

/** Each user as given, with its TOTP credential, passkeys, API keys and `user.imported` event; OR ROLLBACK as in lineWriter. */
function userWriter(sqlite: Database, now: number) {
  const insert = (table: string, columns: string, values = columns.replace(/\w+/g, '?')) => rowInserter(sqlite, `INSERT OR ROLLBACK INTO ${table} (${columns}) VALUES`, `(${values})`);
  const user = insert('users', USER_COLUMNS);
  const totp = insert('totp_credentials', 'user_id, created_at, key, last_used_step');
  const passkey = insert('passkeys', `user_id, ${PASSKEY_COLUMNS}`);
  const apiKey = insert('api_keys', `user_id, ${API_KEY_COLUMNS}`);
  const event = insert('events', 'time, type, user_id, webhook_id', `?, 'user.imported', ?, ${WEBHOOK_ID_SQL}`);
  return (users: StagedUser[]) => {
    user(users.map((u) => [u.id, u.createdAt, u.email, u.emailVerified ? 1 : 0, u.passwordHash, u.recoveryCodeHash, u.disabled ? 1 : 0, u.disabledUntil]));
    totp(users.filter((u) => u.totpKey !== null).map((u) => [u.id, now, u.totpKey, u.totpLastStep]));
    passkey(users.flatMap((u) => u.passkeys.map((p) => [u.id, ...passkeyValues(p)])));
    apiKey(users.flatMap((u) => u.apiKeys.map((k) => [u.id, ...apiKeyValues(k)])));
    event(users.map((u) => [now, u.id]));
  };
}

/** Writes the staged lines in short transactions with pauses, so the server's writes get in between. */
async function writePaced(sqlite: Database, pacing: WritePacing, options: CommitOptions): Promise<CommitResult> {
  const { now } = options;
  const writeRange = lineWriter(sqlite, IN_RANGE, 'OR ROLLBACK');
  const writeLine = lineWriter(sqlite, 's.line = ?', 'OR ABORT');
  const takenField = sqlite.prepare(TAKEN_FIELD);
  const ours = `id IN (SELECT id FROM staged_users s WHERE ${IN_RANGE})`;
  const undoEvents = sqlite.prepare(`INSERT INTO events (time, type, user_id, webhook_id) SELECT ?, 'user.deleted', id, ${WEBHOOK_ID_SQL} FROM users WHERE ${ours}`);
  const undoUsers = sqlite.prepare(`DELETE FROM users WHERE ${ours}`);
  const lastLine = (sqlite.query('SELECT coalesce(max(line), 0) AS n FROM staged_users').get() as { n: number }).n;
  const lines = sqlite.prepare(`SELECT line FROM staged_users s WHERE ${IN_RANGE} ORDER BY line`);
  const counted = withoutUserCountTrigger(sqlite);
  // The staging's garbage goes before the page cache grows to its bulk size: 7 MB of the peak RSS.
  Bun.gc(true);
  const endBulkWrites = beginBulkWrites(sqlite);
  let written = 0;
  const conflicts: LineProblem[] = [];
  const add = (n: number) => ((written += n), n);
  const counting = (write: () => number) => counted(() => add(write()));
  const lineByLine = (from: number, to: number) => {
    let n = 0;
    for (const { line } of lines.all(from, to) as { line: number }[]) {
      try {
        n += inSavepoint(sqlite, () => writeLine(now, line));
      } catch (error) {
        if (!isKeyConflict(error)) throw error;
        conflicts.push({ line, kind: 'taken', field: (takenField.get(line) as { field: UniqueField }).field });
      }
    }
    return n;
  };
  /** A range at once; if a server took one of its keys after the checks, again line by line in a new transaction. */
  const writeRangeOrLines = (from: number, to: number) => {
    try {
      return counting(() => writeRange(now, from, to));
    } catch (error) {
      if (!isKeyConflict(error)) throw error;
      sqlite.exec('BEGIN IMMEDIATE'); // OR ROLLBACK ended the range's
      return options.mode === 'fail' ? counted(() => (lineByLine(from, to), false)) : counting(() => lineByLine(from, to));
    } finally {
      options.onProgress(written);
    }
  };
  let outcome: Awaited<ReturnType<typeof pacedWrites>>;
  try {
    const load = lineWriter(sqlite, IN_RANGE, 'OR ROLLBACK', 'as staged');
    const alone = await loadAlone(sqlite, LOADED, lastLine, options.signal, (from, to) => {
      counting(() => load(now, from, to));
      options.onProgress(written);
    });
    if (alone !== null) return { written: alone.stopped ? 0 : written, conflicts, interrupted: alone.stopped };
    outcome = await pacedWrites(sqlite, pacing, lastLine, options.signal, writeRangeOrLines);
  } finally {
    endBulkWrites();
  }
  const interrupted = outcome.stopped && conflicts.length === 0;
  if (!outcome.stopped || options.mode === 'skip') return { written, conflicts, interrupted };
  // All or nothing: take back what the earlier transactions wrote (their ids were free when checked).
  // Foreign keys are on again: the TOTP credentials, passkeys and API keys go with their users.
  await pacedWrites(sqlite, pacing, outcome.reached, null, (from, to) => {
    undoEvents.run(now, from, to);
    undoUsers.run(from, to);
  });
  return { written: 0, conflicts, interrupted };
}
