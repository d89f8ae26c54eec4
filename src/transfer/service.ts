import { nowSeconds, type Clock } from '../security/clock';
import { isDisabled } from '../users/model';
import { describeProblem, type LineProblem, type StagedUser, toNdjsonLine, type TransferUser } from './model';

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

/** A first import written as it is read, in one transaction; `abandon` (or a false answer) keeps nothing of it. */
export interface DirectLoad {
  /** Writes these users; false when one of them repeats a key written before. */
  add(users: StagedUser[]): boolean;
  /** Builds the indexes and commits; false when two lines share an address or passkey. */
  finish(): boolean;
  abandon(): void;
}

/** The data access of `gatehouse export`, `import` and `backup`: a second database implements the same. */
export interface TransferStore {
  /** Every user, ordered by (created_at, id), in batches, all from one snapshot that `total` counts. */
  exportUsers(batchSize: number): Promise<{ total: number; batches: AsyncIterable<TransferUser[]> }>;
  startImport(): Promise<ImportStaging>;
  /** Null where the import must be staged first: the database holds users, or others have it open. */
  startDirectLoad(now: number): Promise<DirectLoad | null>;
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

export interface ImportProgress {
  /** Lines read and checked so far. */
  reading(lines: number): void;
  /** Lines read, checked and written so far, by a load that writes them as it reads. */
  loading(lines: number): void;
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
  /** The lines can be read twice (a file, not standard input): a load written as they are read may then be tried first. */
  readTwice?: boolean;
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
const INTERRUPTED: ImportOutcome = { result: 'interrupted', imported: 0, problemLines: 0, firstProblemLines: [] };

/**
 * Into an empty database, a file whose lines are all good is written as it is read, without the
 * staging, the checks across lines and the second pass (docs/migrating.md). Null, keeping nothing, at
 * the first problem or repeated key: the lines are then staged and checked, every problem reported.
 */
async function loadDirectly(load: DirectLoad, lines: AsyncIterable<CheckedLines>, options: ImportOptions): Promise<ImportOutcome | null> {
  let [read, written] = [0, 0];
  try {
    options.progress.loading(0);
    for await (const checked of lines) {
      if (options.signal.aborted) return INTERRUPTED;
      if (checked.problems.length > 0 || !load.add(checked.users)) return null;
      [read, written] = [read + checked.lines, written + checked.users.length];
      options.progress.loading(read);
    }
    return load.finish() ? { result: 'imported', imported: written, problemLines: 0, firstProblemLines: [] } : null;
  } finally {
    load.abandon();
    options.progress.end();
  }
}

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
     * Stages every checked line (`lines` checks them, with `now` for missing times: cli/line-checker.ts,
     * on this thread or another), then checks uniqueness across the file and against existing users, and
     * only then writes: with `fail` nothing at all if any line is bad.
     */
    async importUsers(lines: (now: number) => AsyncIterable<CheckedLines>, options: ImportOptions): Promise<ImportOutcome> {
      const now = nowSeconds(clock);
      const direct = options.readTwice ? await store.startDirectLoad(now) : null;
      const loaded = direct && (await loadDirectly(direct, lines(now), options));
      if (loaded) return loaded;
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
          if (options.signal.aborted) return INTERRUPTED;
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
