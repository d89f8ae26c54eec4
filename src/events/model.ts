import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { currentActor } from '../http/caller';
import { DOCUMENTED_AS, unixSeconds } from '../http/fields';

export const TAG = 'Events';

/** Every event type of API.md §12 to §15, §18 and §19. */
export const EVENT_TYPES = [
  'user.created',
  'user.deleted',
  'user.imported',
  'password.updated',
  'password.rehashed',
  'password.migrated',
  'password.reset',
  'password.incorrect',
  'address.blocked',
  'email.verified',
  'email.updated',
  'totp.registered',
  'totp.removed',
  'second_factor.incorrect',
  'second_factor.locked',
  'recovery_code.regenerated',
  'recovery_code.used',
  'passkey.registered',
  'passkey.removed',
  'passkey.used',
  'passkey.failed',
  'user.disabled',
  'user.enabled',
  'lockouts.cleared',
  'address.cleared',
  'email_code.used',
  'email_code.incorrect',
  'api_key.created',
  'api_key.deleted',
  'credentials.revoked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event before it is stored: services decide these, stores append them inside the transaction of
 * the change they describe. Nothing else fits in one, so no password, code, key or hash can leak into it.
 */
export interface EventDraft {
  type: EventType;
  /** Unix seconds from the injected clock. */
  time: number;
  userId: string | null;
  clientIp: string | null;
  /** The service key of the request that caused it (API.md §17); null outside a request. */
  actor: string | null;
}

/**
 * Drafted in the request's own asynchronous flow, so the actor is taken here: a store may write the
 * draft in a batch that another request's turn commits (db/group-commit.ts).
 */
export const draft = (type: EventType, time: number, userId: string | null, clientIp: string | null = null): EventDraft => ({
  type,
  time,
  userId,
  clientIp,
  actor: currentActor(),
});

export const Event = t.Object({
  // TypeBox's plain integer: Elysia's t.Integer also accepts strings (see unixSeconds).
  id: Type.Integer({ description: 'Increases in commit order; pass the last one seen as `after`', examples: [42] }),
  time: unixSeconds(),
  type: t.Union(
    EVENT_TYPES.map((type) => t.Literal(type)),
    { examples: ['password.incorrect'] },
  ),
  user_id: t.Union([t.String(), t.Null()], { examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  client_ip: t.Union([t.String(), t.Null()], { description: 'The client_ip of the request, when it carried one', examples: ['203.0.113.7'] }),
  actor: t.Union([t.String(), t.Null()], {
    description: 'The name of the service key whose request caused the event; null when none did (the retention sweep, an import, an expiry)',
    examples: ['support_tool'],
  }),
});
export type EventView = typeof Event.static;

export interface StoredEvent {
  id: number;
  time: number;
  type: string;
  userId: string | null;
  clientIp: string | null;
  actor: string | null;
}

export const toEventView = (event: StoredEvent): EventView => ({
  id: event.id,
  time: event.time,
  type: event.type as EventType,
  user_id: event.userId,
  client_ip: event.clientIp,
  actor: event.actor,
});

/** Unknown, not String, so the values are checked by parseEventQuery with one rule for all of them. */
const MAX_USER_ID_LENGTH = 64;

/** The document states each parameter's type and values; parseEventQuery holds the rule. */
const parameter = (documented: Record<string, unknown>, description: string, example: string | number) =>
  t.Optional(t.Unknown({ [DOCUMENTED_AS]: documented, description, examples: [example] }));

export const ListEventsQuery = t.Object({
  user_id: parameter({ type: 'string', maxLength: MAX_USER_ID_LENGTH }, "Only this user's events", 'x7gq2m9kd4a8rfe3hn5pjc6w'),
  type: parameter({ type: 'string', enum: [...EVENT_TYPES] }, 'Only events of this type', 'address.blocked'),
  after: parameter(
    { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 },
    'Only events with a larger id: digits, at most 2^53-1, default 0',
    0,
  ),
  limit: parameter({ type: 'integer', minimum: 1, maximum: 1000, default: 100 }, 'Digits 1 to 1000, default 100', 100),
});

export interface EventQuery {
  userId: string | null;
  type: EventType | null;
  after: number;
  limit: number;
}

export const DEFAULT_EVENT_LIMIT = 100;
export const MAX_EVENT_LIMIT = 1000;

/**
 * Unlike GET /users, a bad value is INVALID_DATA (undefined here), never a fallback: a cursor that
 * silently fell back would replay or skip events. An empty value is absent; a repeated one is bad.
 */
export function parseEventQuery(params: URLSearchParams): EventQuery | undefined {
  const value = (name: string): string | null | undefined => {
    const values = params.getAll(name);
    if (values.length > 1) return undefined;
    return values[0] === undefined || values[0] === '' ? null : values[0];
  };
  const userId = value('user_id');
  const type = value('type');
  const after = value('after');
  const limit = value('limit');
  if (userId === undefined || type === undefined || after === undefined || limit === undefined) return undefined;
  if (type !== null && !(EVENT_TYPES as readonly string[]).includes(type)) return undefined;
  // Longer than any id can be: refused like other malformed values (the document says so).
  if (userId !== null && [...userId].length > MAX_USER_ID_LENGTH) return undefined;
  const afterId = after === null ? 0 : digits(after, 0, Number.MAX_SAFE_INTEGER);
  const pageSize = limit === null ? DEFAULT_EVENT_LIMIT : digits(limit, 1, MAX_EVENT_LIMIT);
  if (afterId === undefined || pageSize === undefined) return undefined;
  return { userId, type: type as EventType | null, after: afterId, limit: pageSize };
}

function digits(value: string, min: number, max: number): number | undefined {
  if (!/^[0-9]+$/.test(value)) return undefined;
  // Exact below 2^53, and any longer run of digits parses to at least 2^53, so the bound still holds.
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

/** A wrong second-factor code (TOTP, recovery code, email code), and the lock it may have started. */
export const wrongCodeEvents = (time: number, userId: string, locked: boolean): EventDraft[] => {
  const incorrect = draft('second_factor.incorrect', time, userId);
  return locked ? [incorrect, draft('second_factor.locked', time, userId)] : [incorrect];
};
