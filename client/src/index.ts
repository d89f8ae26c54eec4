/**
 * @gatehouse/client: one typed method per operationId of Gatehouse's OpenAPI document (API.md §16).
 * The types and the operation table are generated from the document (scripts/generate.ts); this file
 * only sends requests with `fetch` and reads the answers.
 */
import type { operations } from './generated/openapi.js';
import { OPERATIONS } from './generated/operations.js';

export type { components, operations, paths } from './generated/openapi.js';
export { OPERATIONS };

export type OperationId = keyof typeof OPERATIONS & keyof operations;

/** An absent group is `?: never` in the generated types. */
type Group<T> = [NonNullable<T>] extends [never] ? {} : NonNullable<T>;
type PathParams<O> = O extends { parameters: { path?: infer P } } ? Group<P> : {};
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Group<Q> : {};
type Body<O> = O extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } }
    ? Partial<B>
    : {};
/** A method's one argument: its path parameters, query parameters and body fields by their documented names. */
export type Input<K extends OperationId> = PathParams<operations[K]> & QueryParams<operations[K]> & Body<operations[K]>;

type Responses<K extends OperationId> = operations[K]['responses'];
type Content<R> = R extends { content: infer C } ? C[keyof C] : null;
/** The 200 body (JSON, or the text of GET /metrics); null for 204. */
export type Data<K extends OperationId> = 200 extends keyof Responses<K> ? Content<Responses<K>[200]> : null;
type ErrorStatus<K extends OperationId> = Exclude<keyof Responses<K>, 200 | 204>;
/** The error codes the operation documents. */
export type ErrorCode<K extends OperationId> = Responses<K>[ErrorStatus<K>] extends infer R
  ? R extends { content: { 'application/json': { error: infer C } } }
    ? C
    : never
  : never;

export interface GatehouseError<Code extends string = string> {
  status: number;
  code: Code;
  /** Seconds, from Retry-After (every TOO_MANY_REQUESTS carries it). */
  retryAfter?: number;
}
export type Result<K extends OperationId> = { data: Data<K>; error: null } | { data: null; error: GatehouseError<ErrorCode<K>> };

type Args<K extends OperationId> = {} extends Input<K> ? [input?: Input<K>] : [input: Input<K>];
/** One user of GET /users. */
export type ListedUser = NonNullable<Data<'listUsers'>>[number];
/** What listAllUsers takes: listUsers' parameters without the page and the cursor, which it sets itself. */
export type ListAllUsersInput = Omit<Input<'listUsers'>, 'page' | 'cursor'>;
export type GatehouseClient = { [K in OperationId]: (...args: Args<K>) => Promise<Result<K>> } & {
  /**
   * Every user of a listing (its sort and filters as listUsers takes them), fetched a page of
   * `per_page` at a time by the server's cursor (API.md §20), so the cost of a page does not grow
   * with the depth. Rejects with a GatehousePageError when a page answers an error.
   */
  listAllUsers(input?: ListAllUsersInput): AsyncGenerator<ListedUser, void, undefined>;
};

export interface GatehouseClientOptions {
  /** Where Gatehouse listens, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The configured secret, sent as the raw Authorization header; the client never logs it. */
  secret: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Per attempt; default 10,000 ms. */
  timeoutMs?: number;
  /** Extra attempts for GET and DELETE after a network failure or a 503; default 2. */
  retries?: number;
}

/**
 * Thrown (the promise rejects) when no answer of the contract arrived: the network failed or timed
 * out after every attempt, or the answer was not Gatehouse's (an error without `{"error": CODE}`).
 */
export class GatehouseRequestError extends Error {
  override name = 'GatehouseRequestError';
  constructor(
    message: string,
    readonly operationId: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A page of listAllUsers answered an error; `error` is what the operation's method would have resolved to. */
export class GatehousePageError extends Error {
  override name = 'GatehousePageError';
  constructor(readonly error: GatehouseError) {
    super(`listUsers: ${error.status} ${error.code}`);
  }
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_RETRIES = 2;
const BACKOFF_MS = 200;
const MAX_WAIT_MS = 10_000;

type Operation = (typeof OPERATIONS)[OperationId];
const UNSAFE_PATH_VALUES = new Set(['', '.', '..']);

export function createGatehouseClient(options: GatehouseClientOptions): GatehouseClient {
  const base = new URL(options.url);
  const send = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  if (typeof send !== 'function') throw new TypeError('no fetch: pass options.fetch');
  if (!Number.isInteger(retries) || retries < 0) throw new TypeError('retries must be a whole number, 0 or more');
  // Kept in this closure only: not a property of the client, so printing the client cannot show it.
  const secret = options.secret;

  /** The answer, with the headers of the response it came from (listAllUsers reads the cursor there). */
  async function call(id: OperationId, input: Record<string, unknown> = {}): Promise<{ result: Result<OperationId>; headers: Headers }> {
    const operation: Operation = OPERATIONS[id];
    const request = buildRequest(base, operation, input, secret);
    // Retrying is safe only where repeating changes nothing more (API.md §16).
    const attempts = operation.method === 'GET' || operation.method === 'DELETE' ? retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await send(request.url, { ...request.init, signal: AbortSignal.timeout(timeoutMs) });
      } catch (cause) {
        if (attempt < attempts) {
          await sleep(backoff(attempt));
          continue;
        }
        const what = isTimeout(cause) ? `timed out after ${timeoutMs} ms` : 'failed';
        throw new GatehouseRequestError(`${id}: ${operation.method} ${request.url} ${what}`, id, undefined, { cause });
      }
      if (response.status === 503 && attempt < attempts) {
        await response.body?.cancel();
        await sleep(Math.max(backoff(attempt), Math.min(retryAfterOf(response) ?? 0, MAX_WAIT_MS / 1000) * 1000));
        continue;
      }
      return { result: await readAnswer(id, operation, response), headers: response.headers };
    }
  }

  async function* listAllUsers(input: ListAllUsersInput = {}): AsyncGenerator<ListedUser, void, undefined> {
    const { page: _page, cursor: _cursor, ...query } = input as Record<string, unknown>;
    for (let cursor: string | null = null; ; ) {
      const { result, headers } = await call('listUsers', cursor === null ? query : { per_page: query.per_page, cursor });
      if (result.error !== null) throw new GatehousePageError(result.error);
      yield* result.data as unknown as ListedUser[];
      cursor = headers.get('x-pagination-next-cursor');
      if (cursor === null) return;
    }
  }

  const client = { listAllUsers } as Record<string, unknown>;
  for (const id of Object.keys(OPERATIONS) as OperationId[]) client[id] = async (input?: Record<string, unknown>) => (await call(id, input)).result;
  return client as unknown as GatehouseClient;
}

function buildRequest(base: URL, operation: Operation, input: Record<string, unknown>, secret: string) {
  const taken = new Set<string>([...operation.path_params, ...operation.query]);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = input[name];
    if (value === undefined || value === null) throw new TypeError(`${operation.method} ${operation.path}: ${name} is required`);
    const text = String(value);
    // '' would drop the segment and '.' or '..' would be resolved away by URL: DELETE
    // /users/{id}/passkeys/.. is DELETE /users/{id}, another operation on another resource.
    if (UNSAFE_PATH_VALUES.has(text)) throw new TypeError(`${operation.method} ${operation.path}: ${name} must not be empty, '.' or '..'`);
    return encodeURIComponent(text);
  });
  const url = new URL(base.pathname.replace(/\/$/, '') + path, base);
  for (const name of operation.query) {
    const value = input[name];
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { authorization: secret, accept: 'application/json' };
  let body: string | undefined;
  if (operation.body) {
    body = JSON.stringify(Object.fromEntries(Object.entries(input).filter(([name, value]) => !taken.has(name) && value !== undefined)));
    headers['content-type'] = 'application/json';
  }
  return { url: url.toString(), init: { method: operation.method, headers, body } };
}

async function readAnswer(id: OperationId, operation: Operation, response: Response): Promise<Result<OperationId>> {
  if (response.ok) {
    if (response.status === 204 || operation.success === null) {
      await response.body?.cancel();
      return { data: null, error: null } as Result<OperationId>;
    }
    const data = operation.success === 'application/json' ? await response.json() : await response.text();
    return { data, error: null } as Result<OperationId>;
  }
  const text = await response.text();
  let code: unknown;
  try {
    code = (JSON.parse(text) as { error?: unknown }).error;
  } catch {
    code = undefined;
  }
  if (typeof code !== 'string') throw new GatehouseRequestError(`${id}: ${response.status} without a Gatehouse error code`, id, response.status);
  const error: GatehouseError = { status: response.status, code };
  const retryAfter = retryAfterOf(response);
  if (retryAfter !== undefined) error.retryAfter = retryAfter;
  return { data: null, error } as Result<OperationId>;
}

const retryAfterOf = (response: Response): number | undefined => {
  const header = response.headers.get('retry-after');
  return header !== null && /^[0-9]+$/.test(header) ? Number(header) : undefined;
};

/** Exponential with full jitter, so clients that failed together do not retry together. */
const backoff = (attempt: number) => Math.random() * Math.min(MAX_WAIT_MS, BACKOFF_MS * 2 ** attempt);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isTimeout = (cause: unknown) => cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError');
