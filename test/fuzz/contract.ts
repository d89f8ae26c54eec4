import fc from 'fast-check';
import { ERROR_STATUS, type ErrorCode } from '../../src/errors';
import { MAX_BODY_BYTES } from '../../src/http/conventions';
import type { Harness } from '../support/harness';
import { bodyRefusal, documentRules, queryRefusal, type DocumentRules } from './document';
import { MAX_KEY_LIFETIME_SECONDS } from '../../src/api-keys/model';
import { MAX_DISABLE_SECONDS } from '../../src/users/model';
import { DISABLED_USER, NOW_MS, PASSKEYS, RESETS, UPDATES, USERS, type Snapshot } from './seed';

/** What the OpenAPI document states about a body field (JSON Schema: lengths count code points). */
export interface FieldRule {
  type: string | string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export interface FuzzRoute {
  method: string;
  /** Elysia's template, e.g. `/users/:id/verify-email`. */
  path: string;
  fields: string[];
  /** The document's rule for each body field. */
  rules: Record<string, FieldRule>;
  takesBody: boolean;
  success: 200 | 204;
  /** The documented media type of the 200 body (GET /metrics answers text, the rest JSON). */
  successType: string | undefined;
  /** The documented `x-error-codes`, less NOT_AUTHENTICATED (every fuzz request carries the secret). */
  errors: Set<string>;
  /** The body and query schemas of the published document, compiled by an independent validator. */
  document: DocumentRules;
}

/** Every route the app serves (minus the docs' own), with what its OpenAPI document promises. */
export async function servedRoutes(h: Harness): Promise<FuzzRoute[]> {
  const document = (await h.call('GET', '/docs/json', { auth: null })).json;
  return h.app.routes
    .filter((route) => !route.path.startsWith('/docs'))
    .map((route) => {
      const documentPath = route.path.replace(/:([^/]+)/g, '{$1}');
      const operation = document.paths[documentPath][route.method.toLowerCase()];
      const body = operation.requestBody?.content?.['application/json']?.schema;
      const codes: ErrorCode[] = operation['x-error-codes'];
      const fuzzRoute: FuzzRoute = {
        method: route.method,
        path: route.path,
        fields: Object.keys(body?.properties ?? {}),
        rules: body?.properties ?? {},
        takesBody: body !== undefined,
        success: operation.responses['200'] ? 200 : 204,
        successType: Object.keys(operation.responses['200']?.content ?? {})[0],
        errors: new Set(codes.filter((code) => code !== 'NOT_AUTHENTICATED')),
        document: documentRules(document, route.method.toLowerCase(), documentPath),
      };
      // Counterexamples name the route instead of printing all of it.
      return Object.defineProperty(fuzzRoute, fc.toStringMethod, { value: () => `${route.method} ${route.path}` });
    });
}

/** What the request named: the decoded path id and the body as the server decodes and parses it. */
export interface Sent {
  route: FuzzRoute;
  pathId: string | undefined;
  /** The decoded `:passkey_id`, on the routes of one passkey. */
  passkeyId?: string;
  /** The body bytes decoded as UTF-8 (undefined when no body was sent, or when they are not UTF-8). */
  bodyText: string | undefined;
  /** The query string as sent, without "?". */
  query: string | undefined;
  /** Bytes that are not valid UTF-8: INVALID_DATA wherever a body is read (API.md §9). */
  notUtf8: boolean;
  bodyBytes: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** The body as the server reads it: strictly UTF-8, a leading byte order mark dropped. */
export function decodeBody(bytes: Uint8Array | undefined): Pick<Sent, 'bodyText' | 'notUtf8' | 'bodyBytes'> {
  if (bytes === undefined) return { bodyText: undefined, notUtf8: false, bodyBytes: 0 };
  try {
    return { bodyText: utf8.decode(bytes), notUtf8: false, bodyBytes: bytes.byteLength };
  } catch {
    return { bodyText: undefined, notUtf8: true, bodyBytes: bytes.byteLength };
  }
}

const parsed = (sent: Sent): unknown => {
  if (sent.notUtf8) return undefined;
  if (sent.bodyText === undefined || sent.bodyText.trim() === '') return {};
  try {
    return JSON.parse(sent.bodyText);
  } catch {
    return undefined; // not JSON
  }
};
const isPlainObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the resource named by the path exists and is live in the seed (the fuzz clock never moves). */
function pathResourceExists(sent: Sent): boolean | undefined {
  const { path } = sent.route;
  if (!path.includes(':id')) return undefined;
  if (path.includes(':passkey_id')) return sent.pathId === USERS.mail && sent.passkeyId === PASSKEYS.ids.passkey;
  if (path.includes(':key_id')) return sent.pathId === USERS.mail;
  const live: string[] = path.startsWith('/users/')
    ? [...Object.values(USERS), DISABLED_USER]
    : path.startsWith('/password-reset-requests/')
      ? [RESETS.open, RESETS.last]
      : [UPDATES.fresh, UPDATES.taken, UPDATES.last];
  return live.includes(sent.pathId ?? '');
}

export interface Answer {
  status: number;
  contentType: string | null;
  text: string;
}

/** Throws when the answer breaks the contract (API.md §1): statuses, error codes, body shape, order of checks. */
export function checkAnswer(sent: Sent, answer: Answer): string | undefined {
  const { route } = sent;
  const fail = (why: string) => {
    throw new Error(`${why}\n  ${route.method} ${route.path} -> ${answer.status} ${answer.text.slice(0, 200)}`);
  };
  if (answer.status >= 500) fail('server error');
  if (answer.status < 300) {
    if (answer.status !== route.success) fail(`success status ${answer.status}, documented ${route.success}`);
    if (answer.status === 204 && answer.text !== '') fail('204 with a body');
    const documentedType = route.successType ?? 'application/json';
    if (answer.status === 200 && !answer.contentType?.startsWith(documentedType)) fail(`200 as ${answer.contentType}, documented ${documentedType}`);
    if (answer.status === 200 && documentedType === 'application/json') JSON.parse(answer.text);
  } else {
    if (!answer.contentType?.startsWith('application/json')) fail(`error without JSON content type: ${answer.contentType}`);
    const body = JSON.parse(answer.text);
    if (!isPlainObject(body) || Object.keys(body).length !== 1 || typeof body.error !== 'string') fail('error body is not exactly {"error": string}');
    const code: string = body.error;
    const tooLarge = code === 'PAYLOAD_TOO_LARGE' && sent.bodyBytes > MAX_BODY_BYTES;
    if (!tooLarge && !route.errors.has(code)) fail(`error code ${code} is not documented for this route`);
    if (ERROR_STATUS[code as ErrorCode] !== answer.status) fail(`status ${answer.status} does not match ${code}`);
  }
  const code: string | undefined = answer.status >= 300 ? JSON.parse(answer.text).error : undefined;
  if (code === 'PAYLOAD_TOO_LARGE') return code;
  // Order of checks (API.md §1): the path's resource, then the body's shape.
  const exists = pathResourceExists(sent);
  if (exists === false && code !== 'NOT_FOUND') fail('a missing path resource must answer NOT_FOUND');
  if (exists === false) return code;
  // The published document decides what is valid (API.md §16): the server refuses exactly what it refuses.
  const bodyRefused = route.takesBody ? bodyRefusal(route.document, parsed(sent)) : undefined;
  const refused = bodyRefused ?? queryRefusal(route.document, sent.query) ?? clockRefusal(route, parsed(sent));
  if (code === 'INVALID_DATA' && refused === undefined) fail('INVALID_DATA for a request the document accepts');
  if (bodyRefused !== undefined && code !== 'INVALID_DATA') fail(`the document refuses the body (${bodyRefused}): must answer INVALID_DATA`);
  return code;
}

/**
 * The rules no schema can state, because they move with the clock: a disable's `until` and an API
 * key's `expires_at` later than now and at most 10 years ahead (API.md §14, §18). The document says
 * them in words; the fuzz clock stands still.
 */
const CLOCK_BOUND_FIELDS: Record<string, { field: string; maxAhead: number }> = {
  '/users/:id/disable': { field: 'until', maxAhead: MAX_DISABLE_SECONDS },
  '/users/:id/api-keys': { field: 'expires_at', maxAhead: MAX_KEY_LIFETIME_SECONDS },
};
function clockRefusal(route: FuzzRoute, body: unknown): string | undefined {
  const bound = CLOCK_BOUND_FIELDS[route.path];
  if (bound === undefined || route.method !== 'POST' || !isPlainObject(body)) return undefined;
  const value = (body as Record<string, unknown>)[bound.field];
  const now = Math.floor(NOW_MS / 1000);
  if (typeof value === 'number' && (value <= now || value > now + bound.maxAhead)) return `${bound.field} is not within (now, now + 10 years]`;
  return undefined;
}

/** The one row a refused request may still change (API.md §4/§5: counted wrong codes, invalidation). */
interface Allowance {
  table: string;
  key: string;
  /** counter: failed_attempts + 1, or the row deleted by the 5th wrong code; vanish: the row may be deleted. */
  rule: 'counter' | 'vanish';
}

function allowance(sent: Sent, code: string): Allowance | undefined {
  const { request_id: requestId, challenge_id: challengeId } = (parsed(sent) ?? {}) as { request_id?: unknown; challenge_id?: unknown };
  const bodyKey = typeof requestId === 'string' ? requestId : '';
  const { path } = sent.route;
  if (code === 'INCORRECT_CODE' && path === '/password-reset-requests/:id/verify-email') return { table: 'password_reset_requests', key: sent.pathId!, rule: 'counter' };
  if (code === 'INCORRECT_CODE' && path === '/users/:id/verify-email') return { table: 'email_verification_requests', key: sent.pathId!, rule: 'counter' };
  if (code === 'INCORRECT_CODE' && path === '/verify-new-email') return { table: 'email_update_requests', key: bodyKey, rule: 'counter' };
  if (code === 'INCORRECT_CODE' && path === '/authenticate/email-code') return { table: 'email_sign_in_requests', key: bodyKey, rule: 'counter' };
  if (code === 'EMAIL_ALREADY_USED' && path === '/verify-new-email') return { table: 'email_update_requests', key: bodyKey, rule: 'vanish' };
  // A verification that ran used its challenge up, successful or not (API.md §13).
  if ((code === 'PASSKEY_VERIFICATION_FAILED' || code === 'PASSKEY_ALREADY_REGISTERED') && typeof challengeId === 'string') return { table: 'challenges', key: challengeId, rule: 'vanish' };
  return undefined;
}

const LAST_ATTEMPT = 4;

/**
 * The events a refused request appends (API.md §12, §13, §15): a wrong password or an unknown email at
 * login, a wrong emailed sign-in code, the wrong codes that count toward a second-factor lockout and
 * failed passkey verifications, each maybe with the lock it started.
 */
function allowedEvents(sent: Sent, code: string): string[][] {
  const { path } = sent.route;
  const passwordChecks = ['/users/:id/verify-password', '/users/:id/update-password', '/authenticate/password'];
  const secondFactors = ['/users/:id/verify-2fa/totp', '/users/:id/register-totp', '/users/:id/reset-2fa', '/users/:id/verify-email', '/verify-new-email'];
  if ((code === 'INCORRECT_PASSWORD' && passwordChecks.includes(path)) || (code === 'NOT_FOUND' && path === '/authenticate/password')) {
    return [['password.incorrect'], ['password.incorrect', 'address.blocked']];
  }
  if (code === 'INCORRECT_CODE' && path === '/authenticate/email-code') return [['email_code.incorrect'], ['email_code.incorrect', 'address.blocked']];
  if (code === 'INCORRECT_CODE' && secondFactors.includes(path)) {
    // A replayed TOTP code is refused without counting: it is not a guess at the key.
    const replay = path === '/users/:id/verify-2fa/totp' ? [[]] : [];
    return [['second_factor.incorrect'], ['second_factor.incorrect', 'second_factor.locked'], ...replay];
  }
  // A verification that ran used its challenge up and says so; a login's failure may start the
  // address's block, a second factor's the user's lock (API.md §13). A challenge already gone: nothing.
  if (code === 'PASSKEY_VERIFICATION_FAILED') {
    const lock = path === '/authenticate/passkey' ? 'address.blocked' : 'second_factor.locked';
    return [['passkey.failed'], ['passkey.failed', lock], []];
  }
  return [[]];
}

/** Stored events never change; a refused request may only append the ones its error allows. */
function checkEvents(sent: Sent, code: string, before: Snapshot, after: Snapshot, fail: (why: string) => never): void {
  const was = before.get('events')!;
  const now = after.get('events')!;
  for (const [id, row] of was) if (JSON.stringify(now.get(id)) !== JSON.stringify(row)) fail(`event ${id} changed`);
  const added = [...now.entries()].filter(([id]) => !was.has(id)).map(([, row]) => (row as { type: string }).type);
  const allowed = allowedEvents(sent, code);
  if (!allowed.some((types) => JSON.stringify(types) === JSON.stringify(added))) fail(`events ${JSON.stringify(added)} appended`);
}

/** A refused request changed nothing, except the single counter or invalidation its error code allows. */
export function checkRefusalKeptState(sent: Sent, code: string, before: Snapshot, after: Snapshot): void {
  const allowed = allowance(sent, code);
  const fail = (why: string): never => {
    throw new Error(`${code} changed the database: ${why}`);
  };
  checkEvents(sent, code, before, after, fail);
  for (const [table, rowsBefore] of before) {
    if (table === 'events') continue;
    const rowsAfter = after.get(table)!;
    const same = (key: string) => JSON.stringify(rowsBefore.get(key)) === JSON.stringify(rowsAfter.get(key));
    const order = (rows: Map<string, unknown>) => [...rows.keys()].filter((k) => k !== allowed?.key || table !== allowed.table).join();
    if (order(rowsBefore) !== order(rowsAfter)) fail(`rows of ${table} added, removed or reordered`);
    for (const key of new Set([...rowsBefore.keys(), ...rowsAfter.keys()])) {
      if (same(key)) continue;
      if (allowed === undefined || allowed.table !== table || allowed.key !== key) fail(`${table} row ${key} changed`);
      const was = rowsBefore.get(key) as { failed_attempts: number } | undefined;
      const now = rowsAfter.get(key) as { failed_attempts: number } | undefined;
      if (was === undefined) fail(`${table} row ${key} appeared`);
      if (now === undefined) {
        if (allowed!.rule === 'counter' && was!.failed_attempts !== LAST_ATTEMPT) fail(`${table} row ${key} deleted before its 5th wrong code`);
        continue;
      }
      const counted = allowed!.rule === 'counter' && JSON.stringify({ ...was, failed_attempts: was!.failed_attempts + 1 }) === JSON.stringify(now);
      if (!counted) fail(`${table} row ${key}: ${JSON.stringify(was)} -> ${JSON.stringify(now)}`);
    }
  }
}
