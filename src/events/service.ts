import { startBatchSweeper, type StoppableSweeper, SWEEP_BATCH_SIZE } from '../sweeps/batch-sweeper';
import type { Logger } from '../http/log';
import { toUnixSeconds, type Clock } from '../security/clock';
import { type EventQuery, type EventView, toEventView } from './model';
import type { EventStore } from './store';

export const DEFAULT_EVENTS_RETENTION_DAYS = 90;
const DAY_SECONDS = 24 * 60 * 60;

export function createEventsService({ store }: { store: EventStore }) {
  return {
    /**
     * One page, oldest first, and the `after` to ask for the next one: the last id returned, or the
     * `after` given when the page is empty (nothing newer yet: ask again with the same value).
     */
    async list(query: EventQuery): Promise<{ items: EventView[]; nextAfter: number }> {
      const rows = await store.list(query);
      return { items: rows.map(toEventView), nextAfter: rows.at(-1)?.id ?? query.after };
    },
  };
}
export type EventsService = ReturnType<typeof createEventsService>;

/** Deletes one batch of events older than the retention at nowMs; answers how many. */
export function sweepOldEvents(store: EventStore, nowMs: number, retentionDays: number, batchSize = SWEEP_BATCH_SIZE): Promise<number> {
  return store.deleteOlderThan(toUnixSeconds(nowMs) - retentionDays * DAY_SECONDS, batchSize);
}

/** The events' retention sweep, in batches and yielding between them like the expired requests' sweep. */
export function startEventSweeper(
  deps: { store: EventStore; clock: Clock; log: Logger; retentionDays: number },
  intervalMs = 60_000,
): StoppableSweeper {
  return startBatchSweeper(
    { clock: deps.clock, log: deps.log, what: 'old events', sweepBatch: (nowMs) => sweepOldEvents(deps.store, nowMs, deps.retentionDays) },
    intervalMs,
  );
}
