import { nowSeconds, type Clock } from '../security/clock';
import { isDisabled } from '../users/model';
import { generateId } from '../security/random';
import { describeProblem, isProblem, type LineProblem, parseImportLine, type StagedUser, toNdjsonLine, type TransferUser } from './model';

// What the service needs of a database: store.ts implements it on SQLite, store.pg.ts on PostgreSQL.

export interface CommitOptions {
  /** 'fail': all or nothing; 'skip': lines that meet a conflict are left out. */
  mode: 'fail' | 'skip';
  /** The time of the `user.imported` events, and the TOTP credentials' `created_at` (not carried by the file). */
  now: number;
  /** Checked between transactions: 'fail' then undoes what was written, 'skip' keeps it. */
  signal: AbortSignal;
  onProgress: (written: number) => void;
}

export interface CommitResult {
  written: number;
  /** Lines an existing user or passkey took while the import ran (also listed by `problems()` afterwards). */
  conflicts: LineProblem[];
  interrupted: boolean;
}

/** An import in progress: lines are staged and checked first, then written in one go. */
export interface ImportStaging {
  /** Lines valid by themselves, and the problems of the others; both in line order. */
  add(users: StagedUser[], problems: LineProblem[]): Promise<void>;
  /** Records the lines that repeat an earlier line's id, email or passkey, or use one the database holds. */
  findConflicts(): Promise<void>;
  /** Every problem so far, in line order. */
  problems(batchSize: number): AsyncIterable<LineProblem[]>;
  /** Lines with at least one problem, and lines that would be written. */
  counts(): Promise<{ problemLines: number; writable: number }>;
  /**
   * Writes each user with its TOTP credential, passkeys and `user.imported` event (no webhook
   * outbox row: the command does not know whether a server sends webhooks), in transactions short
   * enough for servers to go on writing. Users a 'fail' undoes get a `user.deleted` event each.
   */
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

/** A line of the input; `unreadable` says why it could not be read as text (not UTF-8, too long). */
export interface InputLine {
  number: number;
  text: string;
  unreadable?: string;
}

/** Lines read and checked one by one: those valid by themselves, and the problems of the others. */
export interface CheckedLines {
  users: StagedUser[];
  problems: LineProblem[];
  /** How many lines these were, blank ones included. */
  lines: number;
}

/** Checks each line alone (JSON, fields, formats); `now` stands in for missing times. Uniqueness is checked later, across lines. */
export async function* checkLines(input: AsyncIterable<InputLine[]>, now: number): AsyncGenerator<CheckedLines> {
  const defaults = { now, newId: generateId, newRecoveryCodeHash: unguessableRecoveryCodeHash };
  for await (const batch of input) {
    const checked: CheckedLines = { users: [], problems: [], lines: batch.length };
    for (const line of batch) {
      if (line.unreadable !== undefined) checked.problems.push({ line: line.number, kind: 'invalid', field: null, detail: line.unreadable });
      else if (line.text.trim() === '') continue; // blank lines separate nothing and are skipped
      else {
        const parsed = parseImportLine(line.text, line.number, defaults);
        if (isProblem(parsed)) checked.problems.push(parsed);
        else checked.users.push(parsed);
      }
    }
    yield checked;
  }
}

export interface ImportProgress {
  /** Lines read and checked so far. */
  reading(lines: number): void;
  /** Users written so far, of `total`. */
  writing(written: number, total: number): void;
  end(): void;
}

export interface ImportOptions {
  onConflict: 'fail' | 'skip';
  signal: AbortSignal;
  progress: ImportProgress;
  /** One call per problem, in line order ("line 7: email: ..."). */
  report: (problem: string) => void;
}

export interface ImportOutcome {
  /** 'refused': `fail` met a bad line and wrote nothing. */
  result: 'imported' | 'refused' | 'interrupted';
  imported: number;
  /** Lines left out, and the first few of them for a summary. */
  problemLines: number;
  firstProblemLines: number[];
}

const STAGE_BATCH = 5_000;
const EXPORT_BATCH = 1_000;
const SUMMARY_LINES = 10;

/**
 * A line without `recovery_code_hash` gets a new recovery code that is never shown (API.md §11); the
 * user has one to give out after regenerate-recovery-code. Hashing a million codes nobody will see
 * with argon2id would take hours, so the stored value is Gatehouse's argon2id format around a random
 * salt and digest: like the hash of a random code that was thrown away, no code matches it.
 */
export function unguessableRecoveryCodeHash(): string {
  if (randomOffset + 64 > randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomOffset = 0;
  }
  // 32 bytes are 43 base64 symbols and one '=' of padding, which the PHC format leaves off.
  const salt = randomPool.toString('base64', randomOffset, randomOffset + 32).slice(0, 43);
  const digest = randomPool.toString('base64', randomOffset + 32, randomOffset + 64).slice(0, 43);
  randomOffset += 64;
  return `$argon2id$v=19$m=19456,t=2,p=1$${salt}$${digest}`;
}
/** Random bytes fetched 64 KiB at a time: one CSPRNG call per thousand lines, each byte used once. */
const randomPool = Buffer.alloc(64 * 1024);
let randomOffset = randomPool.length;

export function createTransferService({ store, clock }: { store: TransferStore; clock: Clock }) {
  return {
    /** NDJSON of every user from one snapshot, handed to `write` a batch at a time; resolves to the count. */
    async exportUsers(write: (text: string) => Promise<void>, onProgress: (done: number, total: number) => void): Promise<number> {
      const { total, batches } = await store.exportUsers(EXPORT_BATCH);
      const now = nowSeconds(clock);
      let done = 0;
      for await (const batch of batches) {
        let text = '';
        // A disabled_until that has passed is enabled (API.md §14), and is written so.
        for (const user of batch) text += `${toNdjsonLine(isDisabled(user, now) ? user : { ...user, disabled: false, disabledUntil: null })}\n`;
        await write(text);
        done += batch.length;
        onProgress(done, total);
      }
      return done;
    },

    /**
     * Stages every checked line (`lines` checks them, with `now` for missing times: checkLines here,
     * or on another thread), then checks uniqueness across the file and against existing users, and
     * only then writes: with `fail` nothing at all if any line is bad.
     */
    async importUsers(lines: (now: number) => AsyncIterable<CheckedLines>, options: ImportOptions): Promise<ImportOutcome> {
      const now = nowSeconds(clock);
      const staging = await store.startImport();
      const listProblems = async () => {
        const first: number[] = [];
        for await (const batch of staging.problems(1_000)) {
          for (const problem of batch) {
            options.report(describeProblem(problem));
            if (first.length < SUMMARY_LINES && first.at(-1) !== problem.line) first.push(problem.line);
          }
        }
        return first;
      };
      try {
        let users: StagedUser[] = [];
        let problems: LineProblem[] = [];
        let read = 0;
        options.progress.reading(0);
        for await (const checked of lines(now)) {
          if (options.signal.aborted) return { result: 'interrupted', imported: 0, problemLines: 0, firstProblemLines: [] };
          for (const user of checked.users) users.push(user);
          for (const problem of checked.problems) problems.push(problem);
          read += checked.lines;
          if (users.length + problems.length >= STAGE_BATCH) {
            await staging.add(users, problems);
            [users, problems] = [[], []];
          }
          options.progress.reading(read);
        }
        await staging.add(users, problems);
        await staging.findConflicts();
        const before = await staging.counts();
        if (before.problemLines > 0 && options.onConflict === 'fail') {
          options.progress.end();
          return { result: 'refused', imported: 0, problemLines: before.problemLines, firstProblemLines: await listProblems() };
        }
        options.progress.writing(0, before.writable);
        const committed = await staging.commit({
          mode: options.onConflict,
          now,
          signal: options.signal,
          onProgress: (written) => options.progress.writing(written, before.writable),
        });
        options.progress.end();
        const after = await staging.counts();
        const firstProblemLines = await listProblems();
        const result = committed.interrupted ? 'interrupted' : committed.written === 0 && committed.conflicts.length > 0 && options.onConflict === 'fail' ? 'refused' : 'imported';
        return { result, imported: committed.written, problemLines: after.problemLines, firstProblemLines };
      } finally {
        options.progress.end();
        await staging.close();
      }
    },

    /** A consistent copy of the whole database into `path`, a new empty file. */
    backup: (path: string) => store.backup(path),
  };
}
export type TransferService = ReturnType<typeof createTransferService>;
