import type { Database } from 'bun:sqlite';
import type { Db } from '../db/client';
import { isKeyConflict } from '../db/constraints';
import { beginBulkWrites, DEFAULT_PACING, inBatches, pacedWrites, withoutUserCountTrigger, type WritePacing } from '../db/bulk';
import type { LineProblem, StagedUser, TransferUser, UniqueField } from './model';

export interface CommitOptions {
  /** 'fail': all or nothing; 'skip': lines that meet a conflict are left out. */
  mode: 'fail' | 'skip';
  /** The TOTP credentials' `created_at` (not carried by the file). */
  now: number;
  /** Checked between batches: 'fail' then undoes what was written, 'skip' keeps it. */
  signal: AbortSignal;
  onProgress: (written: number) => void;
}

export interface CommitResult {
  written: number;
  /** Lines an existing user took while the import ran (also listed by `problems()` afterwards). */
  conflicts: LineProblem[];
  interrupted: boolean;
}

/** An import in progress: lines are staged and checked first, then written in one go. */
export interface ImportStaging {
  /** Lines valid by themselves, and the problems of the others; both in line order. */
  add(users: StagedUser[], problems: LineProblem[]): Promise<void>;
  /** Records the lines that repeat an earlier line's id or email, or use one an existing user holds. */
  findConflicts(): Promise<void>;
  /** Every problem so far, in line order. */
  problems(batchSize: number): AsyncIterable<LineProblem[]>;
  /** Lines with at least one problem, and lines that would be written. */
  counts(): Promise<{ problemLines: number; writable: number }>;
  commit(options: CommitOptions): Promise<CommitResult>;
  /** Drops the staged lines. */
  close(): Promise<void>;
}

/** The data access of `gatehouse export`, `import` and `backup`: a second database implements the same. */
export interface TransferStore {
  /** Every user, ordered by (created_at, id), in batches, all from one snapshot that `total` counts. */
  exportUsers(batchSize: number): Promise<{ total: number; batches: AsyncIterable<TransferUser[]> }>;
  startImport(): Promise<ImportStaging>;
  /** Writes a consistent copy of the whole database into `path` (a new, empty file) while others write. */
  backup(path: string): Promise<void>;
}

const COLUMNS = 'id, created_at, email, email_verified, password_hash, recovery_code_hash';
const NO_PROBLEM = 'NOT EXISTS (SELECT 1 FROM staging.problems p WHERE p.line = s.line)';
const IN_RANGE = `s.line > ? AND s.line <= ? AND ${NO_PROBLEM}`;
const insertUsersWhere = (where: string) => `INSERT INTO main.users (${COLUMNS}) SELECT ${COLUMNS} FROM staging.users s WHERE ${where}`;
/** Its first parameter is the credentials' created_at. */
const insertTotpWhere = (where: string) =>
  `INSERT INTO main.totp_credentials (user_id, created_at, key, last_used_step)
   SELECT id, ?, totp_key, totp_last_step FROM staging.users s WHERE ${where} AND totp_key IS NOT NULL`;

/** SQLite hands booleans back as 0 and 1; the row object is fresh, so it is fixed in place. */
type ExportRow = Omit<TransferUser, 'emailVerified'> & { emailVerified: number };
const toTransferUser = (row: ExportRow): TransferUser => Object.assign(row, { emailVerified: row.emailVerified === 1 }) as TransferUser;
type ProblemRow = { line: number; kind: LineProblem['kind']; field: UniqueField; detail: string | null; firstLine: number | null };
/** The columns a kind of problem lacks are null. */
const toProblem = ({ detail, firstLine, ...problem }: ProblemRow) =>
  ({ ...problem, ...(detail === null ? {} : { detail }), ...(firstLine === null ? {} : { firstLine }) }) as LineProblem;

export function sqliteTransferStore(db: Db, pacing: WritePacing = DEFAULT_PACING): TransferStore {
  const sqlite = db.$client;
  return {
    async exportUsers(batchSize) {
      sqlite.exec('BEGIN'); // deferred: the count below opens the snapshot the rows are read from
      const total = (sqlite.query("SELECT value FROM counters WHERE name = 'users'").get() as { value: number } | null)?.value ?? 0;
      const rows = sqlite
        .query(
          `SELECT u.id, u.created_at AS createdAt, u.email, u.email_verified AS emailVerified, u.password_hash AS passwordHash,
             u.recovery_code_hash AS recoveryCodeHash, t.key AS totpKey, t.last_used_step AS totpLastStep
           FROM users u LEFT JOIN totp_credentials t ON t.user_id = u.id ORDER BY u.created_at, u.id`,
        )
        .iterate() as IterableIterator<ExportRow>;
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

    async backup(path) {
      // VACUUM INTO reads one snapshot, like any reader in WAL mode: writers go on meanwhile.
      sqlite.query('VACUUM INTO ?').run(path);
    },
  };
}

/** A private temporary database (`ATTACH ''`): SQLite deletes its file when closed, even after a crash. */
function stagingOn(sqlite: Database, pacing: WritePacing): ImportStaging {
  sqlite.exec(`ATTACH '' AS staging; PRAGMA staging.cache_size = -8000;
    CREATE TABLE staging.users (line INTEGER PRIMARY KEY, id TEXT NOT NULL, created_at INTEGER NOT NULL, email TEXT,
      email_verified INTEGER NOT NULL, password_hash TEXT NOT NULL, recovery_code_hash TEXT NOT NULL, totp_key TEXT, totp_last_step INTEGER);
    CREATE TABLE staging.problems (line INTEGER NOT NULL, field TEXT, kind TEXT NOT NULL, detail TEXT, first_line INTEGER);
    CREATE INDEX staging.problems_line ON problems (line)`);
  const stageUser = sqlite.prepare('INSERT INTO staging.users VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const stageProblem = sqlite.prepare('INSERT INTO staging.problems VALUES (?, ?, ?, ?, ?)');
  const addProblems = (problems: LineProblem[]) => {
    for (const p of problems) {
      stageProblem.run(p.line, p.field, p.kind, p.kind === 'invalid' ? p.detail : null, p.kind === 'repeats' ? p.firstLine : null);
    }
  };
  const add = sqlite.transaction((users: StagedUser[], problems: LineProblem[]) => {
    for (const u of users) {
      stageUser.run(u.line, u.id, u.createdAt, u.email, u.emailVerified ? 1 : 0, u.passwordHash, u.recoveryCodeHash, u.totpKey, u.totpLastStep);
    }
    addProblems(problems);
  });

  // The first line with an id or email keeps it; every later line repeating it is a problem.
  const repeats = (field: UniqueField) =>
    `INSERT INTO staging.problems (line, field, kind, first_line)
     SELECT s.line, '${field}', 'repeats', f.first FROM staging.users s
     JOIN (SELECT ${field}, min(line) AS first FROM staging.users WHERE ${field} IS NOT NULL GROUP BY ${field} HAVING count(*) > 1) f
       ON f.${field} = s.${field}
     WHERE s.line > f.first`;
  const taken = (field: UniqueField) =>
    `INSERT INTO staging.problems (line, field, kind) SELECT s.line, '${field}', 'taken' FROM staging.users s
     WHERE s.${field} IS NOT NULL AND EXISTS (SELECT 1 FROM main.users m WHERE m.${field} = s.${field})`;

  return {
    add: async (users, problems) => add(users, problems),
    async findConflicts() {
      sqlite.exec('CREATE INDEX staging.users_id ON users (id); CREATE INDEX staging.users_email ON users (email)');
      sqlite.transaction(() => {
        for (const field of ['id', 'email'] as const) sqlite.run(repeats(field));
        for (const field of ['id', 'email'] as const) sqlite.run(taken(field));
      })();
    },
    problems: (batchSize) => {
      const rows = sqlite.query('SELECT line, kind, field, detail, first_line AS firstLine FROM staging.problems ORDER BY line, rowid').iterate();
      return inBatches(rows as Iterator<ProblemRow>, batchSize, toProblem);
    },
    async counts() {
      const problemLines = (sqlite.query('SELECT count(DISTINCT line) AS n FROM staging.problems').get() as { n: number }).n;
      const writable = (sqlite.query(`SELECT count(*) AS n FROM staging.users s WHERE ${NO_PROBLEM}`).get() as { n: number }).n;
      return { problemLines, writable };
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

/** Writes the staged lines in short transactions with pauses, so the server's writes get in between. */
async function writePaced(sqlite: Database, pacing: WritePacing, options: CommitOptions): Promise<CommitResult> {
  const insertUsers = sqlite.prepare(insertUsersWhere(IN_RANGE));
  const insertTotp = sqlite.prepare(insertTotpWhere(IN_RANGE));
  const deleteUsers = sqlite.prepare(`DELETE FROM main.users WHERE id IN (SELECT id FROM staging.users s WHERE ${IN_RANGE})`);
  const lastLine = (sqlite.query('SELECT coalesce(max(line), 0) AS n FROM staging.users').get() as { n: number }).n;
  const counted = withoutUserCountTrigger(sqlite);
  const endBulkWrites = beginBulkWrites(sqlite);
  let written = 0;
  const conflicts: LineProblem[] = [];
  try {
    const outcome = await pacedWrites(sqlite, pacing, lastLine, options.signal, (from, to) =>
      counted(() => {
        try {
          const n = insertUsers.run(from, to).changes;
          insertTotp.run(options.now, from, to);
          written += n;
          return n;
        } catch (error) {
          if (!isKeyConflict(error)) throw error;
          // An id or email was taken after the check (the server created a user): find the lines one by one.
          const found = insertOneByOne(sqlite, options.now, from, to);
          conflicts.push(...found.conflicts);
          if (options.mode === 'fail') return false;
          written += found.written;
          return found.written;
        } finally {
          options.onProgress(written);
        }
      }),
    );
    const interrupted = outcome.stopped && conflicts.length === 0;
    if (outcome.stopped && options.mode === 'fail') {
      // All or nothing: take back what the earlier transactions wrote (their ids were free when checked).
      await pacedWrites(sqlite, pacing, outcome.reached, null, (from, to) => void deleteUsers.run(from, to));
      return { written: 0, conflicts, interrupted };
    }
    return { written, conflicts, interrupted };
  } finally {
    endBulkWrites();
  }
}

/** Inside a chunk's transaction: writes each line that still fits, with its TOTP credential. */
function insertOneByOne(sqlite: Database, now: number, from: number, to: number) {
  const lines = sqlite.query(`SELECT line, id FROM staging.users s WHERE ${IN_RANGE} ORDER BY line`).all(from, to) as { line: number; id: string }[];
  const insertUser = sqlite.query(`${insertUsersWhere('s.line = ?')} ON CONFLICT DO NOTHING`);
  const insertTotp = sqlite.query(insertTotpWhere('s.line = ?'));
  const idTaken = sqlite.query('SELECT 1 FROM main.users WHERE id = ?');
  const conflicts: LineProblem[] = [];
  let written = 0;
  for (const { line, id } of lines) {
    const taken = idTaken.get(id) !== null;
    if (!taken && insertUser.run(line).changes === 1) {
      insertTotp.run(now, line);
      written++;
    } else {
      conflicts.push({ line, kind: 'taken', field: taken ? 'id' : 'email' });
    }
  }
  return { written, conflicts };
}
