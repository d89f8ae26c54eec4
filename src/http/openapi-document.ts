import { DOCUMENTED_AS } from './fields';
import { OK_HEADERS } from './openapi';

type Node = Record<string, unknown>;
type Operation = { requestBody?: unknown; responses?: Record<string, { content?: Record<string, unknown>; headers?: unknown }>; [OK_HEADERS]?: unknown };
export type OpenApiDocument = { paths?: Record<string, Record<string, Operation>> } & Node;

/** Every object in the document, parents before children. */
function* objectsIn(value: unknown): Generator<Node> {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value)) yield value as Node;
  for (const child of Object.values(value)) yield* objectsIn(child);
}

/** The generator gives a 204 a bogus `content: {type: 'void'}`; a body-less response has no content at all. */
function dropVoidContent(document: OpenApiDocument): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const response of Object.values(operation.responses ?? {})) {
        if (response.content && 'type' in response.content) delete response.content;
      }
    }
  }
}

/** A route's okHeaders (see RouteDoc) become its 200 response's `headers`. */
function placeOkHeaders(document: OpenApiDocument): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const headers = operation[OK_HEADERS];
      delete operation[OK_HEADERS];
      const ok = operation.responses?.['200'];
      if (headers !== undefined && ok !== undefined) ok.headers = headers;
    }
  }
}

/**
 * A field's runtime check is a `gatehouse-*` format (code points, Unicode classes, NFC); the
 * document states the same rule in JSON Schema's own keywords instead (see DOCUMENTED_AS).
 */
function stateDocumentedRules(document: OpenApiDocument): void {
  for (const node of objectsIn(document)) {
    if (typeof node.format === 'string' && node.format.startsWith('gatehouse-')) delete node.format;
    const documented = node[DOCUMENTED_AS];
    if (typeof documented !== 'object' || documented === null) continue;
    delete node[DOCUMENTED_AS];
    Object.assign(node, documented);
  }
}

/**
 * In request bodies, `additionalProperties: true` is JSON Schema's default, so saying it changes
 * nothing for a validator; but type generators turn it into an index signature, and a typed object
 * such as the browser library's RegistrationResponseJSON is then not assignable to the body type.
 * (Answers keep it: linters check their examples as closed objects unless it is said.)
 */
function dropDefaultAdditionalProperties(document: OpenApiDocument): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      for (const node of objectsIn(operation.requestBody)) if (node.additionalProperties === true) delete node.additionalProperties;
    }
  }
}

/**
 * No schema of ours says `additionalProperties: false` (unknown fields are ignored, API.md §1), but
 * Elysia writes it onto the shared schema objects when it compiles a route's validator. Without this,
 * the document would depend on which routes any app in the process had already served.
 */
function dropCompilerAdditionalProperties(document: OpenApiDocument): void {
  for (const node of objectsIn(document)) if (node.additionalProperties === false) delete node.additionalProperties;
}

/**
 * The served document, from the generator's: a copy, since the generator's objects may be the very
 * schemas the routes validate with.
 */
export function finishDocument(generated: unknown): OpenApiDocument {
  const document = JSON.parse(JSON.stringify(generated)) as OpenApiDocument;
  dropVoidContent(document);
  placeOkHeaders(document);
  stateDocumentedRules(document);
  dropDefaultAdditionalProperties(document);
  dropCompilerAdditionalProperties(document);
  return document;
}
