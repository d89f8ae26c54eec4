import { Elysia } from 'elysia';

/**
 * The template of the route Elysia matched (`/users/:id`, never the raw path, whose ids would grow
 * the metrics without bound), kept on the Request itself for the outer handler, under a symbol of
 * this module: a WeakMap entry per request cost about 1 µs (JSC's weak tables), the property a
 * quarter of that. Requests that reach no route (refused before routing, unknown paths) have none.
 */
const TEMPLATE = Symbol('route template');
type Labelled = Request & { [TEMPLATE]?: string };

export const routeTemplateOf = (request: Request): string | undefined => (request as Labelled)[TEMPLATE];

/** Register right after httpConventions: transform hooks run in order, and later ones may throw (404). */
export function routeTemplates() {
  return new Elysia({ name: 'route-templates' }).onTransform({ as: 'global' }, ({ request, route }) => {
    (request as Labelled)[TEMPLATE] = route;
  });
}
