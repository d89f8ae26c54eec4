import { describeError, type Logger } from '../http/log';
import type { Clock } from '../security/clock';

/** Small enough that one DELETE holds SQLite's write lock for only a few milliseconds. */
export const SWEEP_BATCH_SIZE = 500;

/** Lets pending requests (timers, sockets, promise chains) run before the next batch. */
const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface BatchSweeper {
  clock: Clock;
  log: Logger;
  /** Named in the log lines: "swept <what>", "sweep of <what> failed". */
  what: string;
  /** Deletes one batch of what is due at nowMs; answers how many rows it deleted. */
  sweepBatch: (nowMs: number) => Promise<number>;
}

export interface StoppableSweeper {
  /** No run starts after this; resolves once a run under way has finished its batch. */
  stop(): Promise<void>;
}

/**
 * Runs a sweep every intervalMs. Each run deletes one batch at a time and yields in between, so a
 * large backlog never keeps requests waiting; a run still going when the next tick comes is not
 * doubled. Errors are logged and the next tick tries again.
 */
export function startBatchSweeper(deps: BatchSweeper, intervalMs: number): StoppableSweeper {
  let stopped = false;
  let running: Promise<void> | undefined;

  const run = async () => {
    if (running !== undefined || stopped) return;
    running = sweep();
    await running;
    running = undefined;
  };
  const sweep = async () => {
    try {
      const nowMs = deps.clock();
      let total = 0;
      for (;;) {
        const n = await deps.sweepBatch(nowMs);
        total += n;
        if (n === 0 || stopped) break;
        await yieldToRequests();
        if (stopped) break;
      }
      if (total > 0) deps.log({ level: 'info', message: `swept ${deps.what}`, deleted: total });
    } catch (error) {
      deps.log({ level: 'error', message: `sweep of ${deps.what} failed`, ...describeError(error) });
    }
  };

  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
