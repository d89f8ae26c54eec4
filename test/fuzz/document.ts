import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';

/**
 * What the published OpenAPI document accepts, decided by Ajv (JSON Schema draft 2020-12, which
 * OpenAPI 3.1 uses): an independent reading of /docs/json, so the fuzz suite catches every place
 * where the document and the server's own validation disagree (API.md §16).
 */

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
}

interface OpenApi {
  info: { description: string };
  paths: Record<string, Record<string, Operation>>;
}

export interface DocumentRules {
  body: ValidateFunction | undefined;
  /** The nesting limit the document's description states for every body (JSON Schema has no keyword for it). */
  maxDepth: number;
  query: { name: string; required: boolean; integer: boolean; validate: ValidateFunction }[];
}

// Ajv counts string lengths in code points and compiles patterns with the `u` flag, as JSON Schema means them.
// strictRequired off: a oneOf branch that only requires a property defined beside it is the idiom, not a typo.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: false, validateFormats: false });
// Annotations the document carries beside JSON Schema's own keywords.
ajv.addKeyword({ keyword: 'x-error-codes' });

/** The rules of one operation, `method` lower-case and `path` in the document's `{id}` form. */
export function documentRules(document: OpenApi, method: string, path: string): DocumentRules {
  const stated = /nested more than (\d+) levels deep/.exec(document.info.description);
  if (stated === null) throw new Error("the document's description no longer states the nesting limit of bodies");
  const operation = document.paths[path]?.[method];
  if (operation === undefined) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  return {
    body: schema === undefined ? undefined : ajv.compile(schema),
    maxDepth: Number(stated[1]),
    query: (operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'query')
      .map((parameter) => ({
        name: parameter.name,
        required: parameter.required === true,
        integer: parameter.schema.type === 'integer',
        validate: ajv.compile(parameter.schema),
      })),
  };
}

const describe = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ');

/**
 * Why the document refuses these query parameters, or undefined when it accepts them. A query value is
 * read the way OpenAPI's default (form, exploded) serialisation writes a non-array value: once, an
 * integer as decimal digits. An empty value given once stands for none, as the descriptions say.
 */
export function queryRefusal(rules: DocumentRules, query: string | undefined): string | undefined {
  const params = new URLSearchParams(query ?? '');
  for (const parameter of rules.query) {
    const values = params.getAll(parameter.name);
    if (values.length > 1) return `query parameter ${parameter.name} given ${values.length} times`;
    const text = values[0] ?? '';
    if (text === '') {
      if (parameter.required) return `query parameter ${parameter.name} missing`;
      continue;
    }
    const value = parameter.integer && /^-?[0-9]+$/.test(text) ? Number(text) : text;
    if (!parameter.validate(value)) return `query parameter ${parameter.name}=${JSON.stringify(text)}: ${describe(parameter.validate.errors)}`;
  }
  return undefined;
}

/**
 * Why the document refuses this body, or undefined when it accepts it. `body` is the parsed JSON, or
 * undefined for text that is not UTF-8 JSON. The document's description says that any Content-Type
 * is read as JSON and that an empty body is `{}`, so the caller passes `{}` for one.
 */
export function bodyRefusal(rules: DocumentRules, body: unknown): string | undefined {
  if (rules.body === undefined) return undefined;
  if (body === undefined) return 'not UTF-8 JSON';
  if (depthOf(body) > rules.maxDepth) return `nested more than ${rules.maxDepth} levels deep`;
  return rules.body(body) ? undefined : describe(rules.body.errors);
}

/** How deeply arrays and objects nest in a JSON value, the value itself being level 1 (iterative: bodies may be 10,000 deep). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}
