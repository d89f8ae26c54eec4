import { t, type TSchema } from 'elysia';
import { ERROR_STATUS, type ErrorCode } from '../errors';

/** Every endpoint can answer these (the size check runs before routing), so they are added to each route's list. */
const EVERYWHERE: ErrorCode[] = ['PAYLOAD_TOO_LARGE', 'UNKNOWN_ERROR'];
/** A key outside its scope is FORBIDDEN on any operation that needs the credential (API.md §17). */
const AUTHENTICATED: ErrorCode[] = ['NOT_AUTHENTICATED', 'FORBIDDEN', ...EVERYWHERE];

export interface RouteDoc {
  /**
   * The operation's stable name (API.md §16): lower camel case, verb first, unique. Generated clients
   * name their methods after it, so renaming one is a breaking change.
   */
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  /** The error codes this endpoint can answer besides NOT_AUTHENTICATED, FORBIDDEN, PAYLOAD_TOO_LARGE and UNKNOWN_ERROR. */
  errors: ErrorCode[];
  /** The 200 body; omitted for 204 endpoints. */
  ok?: TSchema;
  /** Public endpoints carry no credential and cannot answer NOT_AUTHENTICATED or FORBIDDEN. */
  public?: boolean;
  /** Headers of the 200 answer, by name (finishDocument moves them into the response object). */
  okHeaders?: Record<string, { description: string; schema: Record<string, unknown>; required?: boolean }>;
}

/** Where `documented` leaves okHeaders for finishDocument: the generator builds `responses` itself. */
export const OK_HEADERS = 'x-gatehouse-ok-headers';

/** Route options shared by every endpoint: OpenAPI detail plus a response schema per status. */
export function documented(doc: RouteDoc) {
  const codes = [...new Set([...doc.errors, ...(doc.public ? EVERYWHERE : AUTHENTICATED)])];
  const response: Record<number, TSchema> = doc.ok ? { 200: doc.ok } : { 204: t.Void({ description: 'No body' }) };
  for (const status of new Set(codes.map((code) => ERROR_STATUS[code]))) {
    const here = codes.filter((code) => ERROR_STATUS[code] === status);
    response[status] = t.Object(
      { error: t.Union(here.map((code) => t.Literal(code))) },
      { description: here.join(', '), examples: [{ error: here[0] }] },
    );
  }
  return {
    // Our global parser runs first and always answers; naming 'json' here only tells OpenAPI the body's media type.
    parse: 'json' as const,
    detail: {
      operationId: doc.operationId,
      summary: doc.summary,
      tags: [doc.tag],
      description: doc.description,
      security: doc.public ? [] : [{ secret: [] }],
      'x-error-codes': codes,
      ...(doc.okHeaders ? { [OK_HEADERS]: doc.okHeaders } : {}),
    },
    response,
  };
}
