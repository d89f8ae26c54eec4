import { getTableName } from 'drizzle-orm';
import type { Db } from '../db/client';
import { emailUpdateRequests, emailVerificationRequests, passwordResetRequests } from '../db/schema';
import type { Deps } from '../deps';
import { toUnixSeconds } from '../security/clock';

/** Small enough that one DELETE holds SQLite's write lock for only a few milliseconds. */
export const SWEEP_BATCH_SIZE = 500;

const SWEPT_TABLES = [passwordResetRequests, emailUpdateRequests, emailVerificationRequests];
type SweptTable = (typeof SWEPT_TABLES)[number];

/** One statement of its own (auto-commit), so other writers get the database between batches. */
function deleteExpiredBatch(db: Db, table: SweptTable, nowSeconds: number, batchSize: number): number {
  const name = getTableName(table);
  const expiresAt = table.expiresAt.name;
  // query() caches the compiled statement, so the SQL text is built but not re-parsed each batch.
  const statement = db.$client.query(
    `delete from "${name}" where rowid in (select rowid from "${name}" where "${expiresAt}" <= ? limit ?)`,
  );
  return statement.run(nowSeconds, batchSize).changes;
}

export interface SweepOptions {
  batchSize?: number;
  /** Stop after this many non-empty batches; the rest waits for the next call. */
  maxBatches?: number;
}

/**
 * Deletes the expired rows of the three request tables in batches and returns how many it deleted.
 * A request is expired once `expires_at <= now`, the same rule the endpoints apply.
 */
export function sweepExpired(db: Db, nowMs: number, options: SweepOptions = {}): number {
  const batchSize = options.batchSize ?? SWEEP_BATCH_SIZE;
  let budget = options.maxBatches ?? Infinity;
  const nowSeconds = toUnixSeconds(nowMs);
  let deleted = 0;
  for (const table of SWEPT_TABLES) {
    while (budget > 0) {
      const n = deleteExpiredBatch(db, table, nowSeconds, batchSize);
      if (n === 0) break;
      deleted += n;
      budget--;
      if (n < batchSize) break;
    }
  }
  return deleted;
}

/** Lets pending requests (timers, sockets, promise chains) run before the next batch. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs a sweep every intervalMs. Each run deletes one batch at a time and yields in between, so a
 * large backlog never keeps requests waiting; a run still going when the next tick comes is not
 * doubled. Errors are logged and the next tick tries again.
 */
export function startSweeper(deps: Pick<Deps, 'db' | 'clock' | 'log'>, intervalMs = 60_000): { stop(): void } {
  let stopped = false;
  let running = false;

  const run = async () => {
    if (running || stopped) return;
    running = true;
    try {
      const nowMs = deps.clock();
      let total = 0;
      for (;;) {
        const n = sweepExpired(deps.db, nowMs, { maxBatches: 1 });
        total += n;
        if (n === 0 || stopped) break;
        await yieldToRequests();
        if (stopped) break;
      }
      if (total > 0) deps.log({ level: 'info', message: 'swept expired requests', deleted: total });
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      deps.log({ level: 'error', message: 'sweep of expired requests failed', error: err.name, detail: err.message });
    } finally {
      running = false;
    }
  };

  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
