import { AsyncLocalStorage } from 'node:async_hooks';
import { Elysia } from 'elysia';
import { AppError } from '../errors';

/** Who sent a request: a named service key and what its scope allows (API.md §17). */
export interface Caller {
  readonly name: string;
  permits(operationId: string | undefined): boolean;
}

/**
 * The caller of a request, from the outer handler to the scope check inside Elysia, kept on the
 * Request under a symbol of this module (cheaper than a WeakMap entry, see route-label.ts).
 */
const CALLER = Symbol('caller');
type Called = Request & { [CALLER]?: Caller };
export const setCallerOf = (request: Request, caller: Caller): void => {
  (request as Called)[CALLER] = caller;
};
const callerOf = (request: Request): Caller | undefined => (request as Called)[CALLER];

/**
 * 403 FORBIDDEN for a caller whose scope lacks the matched operation: a transform hook, so it runs
 * right after route matching, before the path's 404 checks and the body's. Register it before any
 * route. `operationOf` answers for a method and route template (HEAD as the GET it mirrors).
 */
export function callerScopes(operationOf: (method: string, route: string) => string | undefined) {
  return new Elysia({ name: 'caller-scopes' }).onTransform({ as: 'global' }, ({ request, route }) => {
    const caller = callerOf(request);
    if (caller !== undefined && !caller.permits(operationOf(request.method === 'HEAD' ? 'GET' : request.method, route))) {
      throw new AppError('FORBIDDEN');
    }
  });
}

/**
 * The name of the key whose request is running, for the events it causes (their `actor`): the
 * services never see the request, and events are drafted inside its asynchronous flow.
 */
const actors = new AsyncLocalStorage<string>();
export const runAsActor = <T>(actor: string, work: () => T): T => actors.run(actor, work);
/** Null outside a request: the sweeper, the import, expiry. */
export const currentActor = (): string | null => actors.getStore() ?? null;
