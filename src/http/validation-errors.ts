type SchemaNode = Record<string, unknown>;
const CHILD_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const CHILD_NODES = ['not', 'items', 'additionalProperties'] as const;

/** The schema and every schema inside it (properties, unions, items, ...). */
function* schemaNodes(schema: unknown): Generator<SchemaNode> {
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as SchemaNode;
  yield node;
  for (const name of CHILD_LISTS) if (Array.isArray(node[name])) for (const child of node[name] as unknown[]) yield* schemaNodes(child);
  for (const name of CHILD_NODES) yield* schemaNodes(node[name]);
  for (const name of ['properties', 'patternProperties']) {
    const children = node[name];
    if (typeof children === 'object' && children !== null) for (const child of Object.values(children)) yield* schemaNodes(child);
  }
}

/**
 * Elysia builds a validation error's message with `mapValueError`, which throws a TypeError (a 500)
 * while it prints a rejected value that cannot become a string: an object with a `toString` or
 * `valueOf` key where a string belongs. When the failing schema has its own `error`, Elysia uses that
 * as the message and never calls the formatter; the message does not matter, the error hook answers
 * INVALID_DATA. So every schema node of every route's input gets one, once, after the routes are
 * registered and before a first request compiles their validators. Not enumerable, so that the
 * OpenAPI document does not show it.
 */
export function withoutValidationMessages<App extends { routes: { hooks: Record<string, unknown> }[] }>(app: App): App {
  for (const { hooks } of app.routes) {
    for (const part of ['body', 'query', 'params', 'headers']) {
      for (const node of schemaNodes(hooks[part])) {
        if (!('error' in node)) Object.defineProperty(node, 'error', { value: 'INVALID_DATA', enumerable: false });
      }
    }
  }
  return app;
}
