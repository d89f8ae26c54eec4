import { Elysia } from 'elysia';

/**
 * The template of the route Elysia matched (`/users/:id`, never the raw path, whose ids would grow
 * the metrics without bound), kept per request for the outer handler. Requests that reach no route
 * (refused before routing, unknown paths) have none.
 */
const templates = new WeakMap<Request, string>();

export const routeTemplateOf = (request: Request): string | undefined => templates.get(request);

/** Register right after httpConventions: transform hooks run in order, and later ones may throw (404). */
export function routeTemplates() {
  return new Elysia({ name: 'route-templates' }).onTransform({ as: 'global' }, ({ request, route }) => {
    templates.set(request, route);
  });
}
