import { AppError } from '../errors';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './pg-errors';

/**
 * Settles with `task`, or rejects with DatabaseUnavailableError after `ms`. Needed because a
 * PostgreSQL host that stops answering leaves established connections waiting: Bun's
 * connectionTimeout only bounds opening a connection, statement_timeout needs a server that runs,
 * and query.cancel() opens a connection of its own that hangs too. The abandoned query keeps its
 * connection until the server answers or TCP gives up; its outcome is unknown, so the caller must
 * treat it like any 503 (not acknowledged, maybe applied).
 */
export function withDeadline<T>(work: PromiseLike<T>, ms: number, what = 'database operation'): Promise<T> {
  // Drizzle's query builders are thenables, not Promises.
  const task = Promise.resolve(work);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseUnavailableError(`${what} took longer than ${ms} ms`)), ms);
  });
  // A late failure of the abandoned task must not become an unhandled rejection.
  task.catch(() => undefined);
  return Promise.race([task, expired]).finally(() => clearTimeout(timer));
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

type AsyncMethods<T> = { [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Promise<R> : T[K] };

/** The same object with every method's promise bounded by withDeadline: one store method is one atomic unit. */
export function withDeadlines<T extends object>(target: T, ms: number): AsyncMethods<T> {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = value.apply(object, args);
        return isThenable(result) ? withDeadline(result, ms, String(property)) : result;
      };
    },
  }) as AsyncMethods<T>;
}

/**
 * A PostgreSQL store as the services need it: every method bounded by `ms`, and a database that is
 * down, slow or going away answering 503 UNAVAILABLE (API.md §10) instead of a 500.
 */
export function asAvailableStore<T extends object>(target: T, ms: number): AsyncMethods<T> {
  const bounded = withDeadlines(target, ms);
  return new Proxy(bounded, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        try {
          return await value.apply(object, args);
        } catch (error) {
          if (isDatabaseUnavailable(error)) throw new AppError('UNAVAILABLE');
          throw error;
        }
      };
    },
  }) as AsyncMethods<T>;
}
