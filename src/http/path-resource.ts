import { Elysia } from 'elysia';
import { AppError } from '../errors';

/**
 * Loads the resource named by `:id` in Elysia's transform phase, which runs before body validation,
 * so an unknown (or expired) one is 404 even when the body is also wrong (API.md §1, order of checks).
 */
export function pathResource<Name extends string, Row>(name: Name, find: (id: string) => Promise<Row | undefined>) {
  return new Elysia().derive({ as: 'scoped' }, async ({ params }) => {
    const id = (params as Record<string, string | undefined>).id;
    const found = id === undefined ? undefined : await find(id);
    if (found === undefined) throw new AppError('NOT_FOUND');
    return { [name]: found } as Record<Name, Row>;
  });
}
