import type { Database } from 'bun:sqlite';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
interface Queued {
  unit: () => unknown;
  resolve: (value: never) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for SQLite. With `synchronous = FULL` every commit waits for an fsync (about 0.8 ms
 * here), and bun:sqlite waits on the event loop's thread: one commit per request caps a hot write
 * path near a thousand requests a second whatever the CPU. Units queued in the same turn of the
 * event loop run one after another in one transaction instead, each in its own savepoint: each is
 * atomic and sees the ones before it, exactly as if they had run one by one; a unit that throws is
 * undone alone; every caller is answered after the one commit, so nothing is acknowledged before
 * it is durable. Units must be synchronous and must not open transactions of their own.
 */
export function groupCommit(client: Database): <T>(unit: () => T) => Promise<T> {
  let queue: Queued[] = [];

  const runBatch = (batch: Queued[]): Outcome[] => {
    client.run('BEGIN IMMEDIATE');
    try {
      const outcomes = batch.map(({ unit }): Outcome => {
        client.run('SAVEPOINT unit');
        try {
          const value = unit();
          client.run('RELEASE unit');
          return { ok: true, value };
        } catch (error) {
          client.run('ROLLBACK TO unit');
          client.run('RELEASE unit');
          return { ok: false, error };
        }
      });
      client.run('COMMIT');
      return outcomes;
    } catch (error) {
      if (client.inTransaction) client.run('ROLLBACK');
      throw error;
    }
  };

  const flush = () => {
    const batch = queue;
    queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = runBatch(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value as never);
      else item.reject(outcome.error);
    });
  };

  return <T>(unit: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ unit, resolve: resolve as (value: never) => void, reject });
    });
}
