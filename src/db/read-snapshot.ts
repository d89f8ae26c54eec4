/**
 * Hot reads that share one read transaction for a turn of the event loop. In WAL mode a statement
 * outside a transaction opens and closes one, and that takes and releases a lock on the `-shm` file:
 * two fcntl calls, about 2 µs of the 3 µs a view's statement takes (docs/benchmarks.md, "a read
 * transaction shared per turn"). The shared one lives on a second connection, so the main connection's writes
 * never run inside it, and it ends
 * - before any statement of the main connection runs: a write never finds it open, so the WAL is
 *   checkpointed and restarted exactly as before, and a read after this process's write sees it;
 * - at the end of the turn (setImmediate);
 * - when a read fails.
 * While the main connection is inside a transaction, the reads run there and see its writes, as before.
 * Another process's commit is seen from the next turn on: only a request already being read in this
 * turn can miss it, and that request is concurrent with it.
 */
import { Database, type SQLQueryBindings, type Statement } from 'bun:sqlite';

export interface SnapshotQuery<Row, Params extends SQLQueryBindings[]> {
  get(...params: Params): Row | null;
}

type Bindings = SQLQueryBindings[];

interface SharedReads {
  query(sql: string, onMain: Statement<unknown, Bindings>): SnapshotQuery<unknown, Bindings>;
  /** Whether a read transaction is open: for tests. */
  readonly open: boolean;
}

const shared = new WeakMap<Database, SharedReads>();

/** A statement whose every use first ends the shared read transaction. */
const GUARDED = Symbol('guarded');
const STATEMENT_METHODS = ['run', 'get', 'all', 'values', 'iterate'] as const;

/**
 * Gives `main` a second connection for `snapshotQuery`'s reads, and guards every way of running a
 * statement on `main`. Call before anything prepares a statement on it. Nothing for ':memory:',
 * where a second connection would open another database.
 */
export function shareReadTransactions(main: Database, options: { busyTimeoutMs: number; pageCacheKib?: number }): void {
  if (main.filename === ':memory:' || main.filename === '') return;
  const reader = new Database(main.filename, { strict: true });
  reader.exec(`PRAGMA busy_timeout = ${options.busyTimeoutMs}; PRAGMA query_only = 1`);
  if (options.pageCacheKib !== undefined) reader.exec(`PRAGMA cache_size = -${options.pageCacheKib}`);
  const begin = reader.prepare('BEGIN');
  const rollback = reader.prepare('ROLLBACK');
  let open = false;
  const end = () => {
    if (!open) return;
    open = false;
    if (reader.inTransaction) rollback.run(); // a read transaction: nothing to commit
  };
  const start = () => {
    if (open) return;
    begin.run();
    open = true;
    setImmediate(end);
  };
  guardConnection(main, end, () => reader.close());
  shared.set(main, {
    query(sql: string, onMain: Statement<unknown, Bindings>) {
      const statement = reader.query<unknown, Bindings>(sql);
      return {
        get(...params: Bindings): unknown {
          if (main.inTransaction) return onMain.get(...params);
          start();
          try {
            return statement.get(...params);
          } catch (error) {
            end();
            throw error;
          }
        },
      };
    },
    get open() {
      return open;
    },
  });
}

/** `sql` as a read through the shared read transaction when `main` has one, else on `main` itself. */
export function snapshotQuery<Row, Params extends SQLQueryBindings[]>(main: Database, sql: string): SnapshotQuery<Row, Params> {
  const onMain = main.query<unknown, Bindings>(sql);
  return (shared.get(main)?.query(sql, onMain) ?? onMain) as SnapshotQuery<Row, Params>;
}

/** Whether `main`'s shared read transaction is open (tests). */
export const readTransactionOpen = (main: Database): boolean => shared.get(main)?.open ?? false;

type AnyFunction = (...args: never[]) => unknown;

function guardConnection(main: Database, end: () => void, closeReader: () => void): void {
  const guard = <F extends AnyFunction>(run: F): F =>
    ((...args: Parameters<F>) => {
      end();
      return run(...args);
    }) as F;
  const guardStatement = <S extends Statement<unknown, never[]>>(statement: S): S => {
    const marked = statement as S & { [GUARDED]?: true };
    if (marked[GUARDED]) return statement;
    const methods = statement as unknown as Record<string, AnyFunction>;
    for (const name of STATEMENT_METHODS) methods[name] = guard(methods[name]!.bind(statement));
    marked[GUARDED] = true;
    return statement;
  };
  const prepare = main.prepare.bind(main);
  const query = main.query.bind(main);
  const transaction = main.transaction.bind(main);
  const close = main.close.bind(main);
  Object.assign(main, {
    exec: guard(main.exec.bind(main)),
    run: guard(main.run.bind(main)),
    prepare: (...args: Parameters<typeof prepare>) => guardStatement(prepare(...args)),
    query: (...args: Parameters<typeof query>) => guardStatement(query(...args)),
    transaction: (...args: Parameters<typeof transaction>) => {
      // Bun's own properties of a transaction function, beside the three its types declare.
      const inner = transaction(...args) as ReturnType<typeof transaction> & { database: Database; default: AnyFunction };
      return Object.assign(guard(inner), {
        database: inner.database,
        default: guard(inner.default),
        deferred: guard(inner.deferred),
        immediate: guard(inner.immediate),
        exclusive: guard(inner.exclusive),
      });
    },
    close: (...args: Parameters<typeof close>) => {
      end();
      closeReader();
      return close(...args);
    },
  });
}
