import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { AppError } from '../errors';
import { ClientIp, DOCUMENTED_AS, Email, Password, passwordHashField, unixSeconds } from '../http/fields';
import { isValidEmail, normalizeEmail } from '../security/email-address';
import { RequiredClientIp } from '../http/fields';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { fallingBack, positiveInteger, single } from '../http/query';

export const User = t.Object({
  id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  email: t.Union([t.String({ examples: ['ada@example.com'] }), t.Null()]),
  email_verified: t.Boolean(),
  registered_totp: t.Boolean(),
  // Plain integer, not Elysia's string-or-number t.Integer (see unixSeconds).
  passkey_count: Type.Integer({ minimum: 0, description: 'How many passkeys the user has registered', examples: [1] }),
  disabled: t.Boolean({ description: 'A disabled user cannot log in or change its credentials (USER_DISABLED)' }),
  disabled_until: t.Union([unixSeconds(), t.Null()], {
    description: 'When a disabled user becomes enabled again by itself; null while enabled or when disabled until enabled',
  }),
});
export type UserView = typeof User.static;

/** The columns the stores select for a user's view; SQLite answers its EXISTS as 0 or 1. */
export interface UserViewColumns {
  id: string;
  createdAt: number;
  email: string | null;
  emailVerified: boolean;
  registeredTotp: boolean | number;
  passkeyCount: number;
  disabled: boolean;
  disabledUntil: number | null;
}

/** The stored state of API.md §14: `disabledUntil` null means until enabled. */
export interface DisabledState {
  disabled: boolean;
  disabledUntil: number | null;
}

/**
 * Whether the user is disabled at `now` (Unix seconds). A `disabledUntil` that has passed reads as
 * enabled with no write (API.md §14): every check of the state goes through here.
 */
export const isDisabled = (user: DisabledState, now: number): boolean =>
  user.disabled && (user.disabledUntil === null || user.disabledUntil > now);

/** USER_DISABLED (API.md §14) for a user disabled at `now`; every feature refuses through this. */
export function rejectDisabled(user: DisabledState, now: number): void {
  if (isDisabled(user, now)) throw new AppError('USER_DISABLED');
}

/** "At most 10 years ahead" (API.md §14), as 10 × 365.25 days. */
export const MAX_DISABLE_SECONDS = 315_576_000;

export const ClearAddressLimitsBody = t.Object({ client_ip: RequiredClientIp });

export const DisableUserBody = t.Object({
  until: t.Optional(
    t.Union([Type.Integer(), t.Null()], {
      description:
        'Unix seconds when the user becomes enabled again by itself: later than now and at most 10 years (315,576,000 s) ahead, else INVALID_DATA. ' +
        'Absent or null: disabled until enabled.',
      examples: [1795310920],
    }),
  ),
});

export const toUserView = (row: UserViewColumns, now: number): UserView => ({
  id: row.id,
  created_at: row.createdAt,
  email: row.email,
  email_verified: row.emailVerified,
  registered_totp: Boolean(row.registeredTotp),
  passkey_count: row.passkeyCount,
  disabled: isDisabled(row, now),
  disabled_until: isDisabled(row, now) ? row.disabledUntil : null,
});

export const CreatedUser = t.Composite([
  User,
  t.Object({ recovery_code: t.String({ description: 'Shown once; store it with the user', examples: ['7KQ2MZXDH3PA9WEN'] }) }),
]);
export type CreatedUserView = typeof CreatedUser.static;

const HASH_EXAMPLE = '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC';

/** Exactly one of `password` and `password_hash` (API.md §11): the service checks that, the document says it with oneOf. */
export const CreateUserBody = t.Object(
  {
  password: t.Optional(Password),
  password_hash: t.Optional(
    passwordHashField(
      'Instead of password: a hash from another system, in one of the formats docs/migrating.md lists (bcrypt, argon2, scrypt, PBKDF2, Firebase scrypt, phpass, ...); replaced by argon2id at the first correct password',
      [HASH_EXAMPLE],
    ),
  ),
  email: t.Optional(t.Union([Email, t.Null()])),
  client_ip: ClientIp,
  },
  {
    // Each branch names the property it requires, so generated types require one of the two too.
    [DOCUMENTED_AS]: {
      oneOf: [
        { required: ['password'], properties: { password: true } },
        { required: ['password_hash'], properties: { password_hash: true } },
      ],
    },
    description: 'Exactly one of password and password_hash.',
    // Whole bodies: an example built from the fields' own examples would send both and be refused.
    examples: [
      { password: 'correct horse battery staple', email: 'ada@example.com' },
      { password_hash: HASH_EXAMPLE, email: 'grace@example.com' },
    ],
  },
);

export const ListUsersQuery = t.Object({
  sort_by: fallingBack({ type: 'string', enum: ['created_at', 'id'], default: 'created_at' }, 'Sort key, case-sensitive', 'created_at'),
  sort_order: fallingBack({ type: 'string', enum: ['ascending', 'descending'], default: 'ascending' }, 'Sort direction, case-sensitive', 'ascending'),
  per_page: fallingBack({ type: 'integer', minimum: 1, maximum: 1000, default: 20 }, 'Users per page, digits only; larger values are capped at 1000', 20),
  page: fallingBack({ type: 'integer', minimum: 1, default: 1 }, 'Page number, digits only; a page past the end is empty', 1),
  email: fallingBack(
    { type: 'string' },
    'Exact address (compared after NFC normalisation and lower-casing), through the email index: 0 or 1 users. ' +
      'An address that is not valid, empty or given twice matches no user (never 400); combines with the other parameters',
    'ada@example.com',
  ),
  email_query: fallingBack(
    { type: 'string' },
    'Case-insensitive substring of the email address (compared after NFC normalisation and lower-casing); empty means no filter',
    'example.com',
  ),
  cursor: t.Optional(
    t.String({
      description:
        'Continues a listing after the page whose X-Pagination-Next-Cursor (or Link rel="next") it came from, in that listing\'s sort and filter ' +
        '(sort_by, sort_order, email and email_query are then ignored, and so is page), at the same cost at any depth. ' +
        'Opaque; a cursor that cannot be read answers 400 INVALID_DATA',
      examples: ['q2dTc3W0eyJzIjoiY3JlYXRlZF9hdCJ9'],
    }),
  ),
});

export interface ListOptions {
  sortBy: 'created_at' | 'id';
  ascending: boolean;
  perPage: number;
  page: number;
  /** Normalised like stored emails; null lists every user. */
  emailQuery: string | null;
  /** Exact address, normalised; null: no exact filter; 'none': an invalid address that matches no user. */
  email: string | null | 'none';
  /** Keyset paging (API.md §20): the page starts after this user in the sort order; `page` is then ignored. */
  after: ListPosition | null;
}

/** Where a page ends: its last user's sort key and id. */
export type ListPosition = { createdAt: number; id: string };

const MAX_PER_PAGE = 1000;
/** Keeps (page - 1) * per_page an exact integer; any page this far out is empty anyway. */
const MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / MAX_PER_PAGE);

/** Unlike the other parameters, a bad `email` does not fall back to "every user": a lookup must never answer someone else. */
function exactEmail(params: URLSearchParams): string | null | 'none' {
  if (!params.has('email')) return null;
  const value = single(params, 'email');
  return value === null ? 'none' : lookupEmail(value);
}

/** The `email` parameter's address as stored, or 'none' when no user can hold it (API.md §14). */
export const lookupEmail = (value: string): string | 'none' => (isValidEmail(value) ? normalizeEmail(value) : 'none');

/**
 * From the URL itself: Elysia's parsed query keeps only one value of a repeated parameter. A
 * `cursor` brings its listing's sort and filter; one that cannot be read (or given twice) is INVALID_DATA.
 */
export function parseListQuery(params: URLSearchParams): ListOptions {
  const perPage = positiveInteger(single(params, 'per_page'), 20, MAX_PER_PAGE);
  if (params.has('cursor')) {
    const cursor = readCursor(single(params, 'cursor'));
    if (cursor === undefined) throw new AppError('INVALID_DATA');
    return { ...cursor, perPage, page: 1 };
  }
  const emailQuery = single(params, 'email_query');
  return {
    email: exactEmail(params),
    sortBy: single(params, 'sort_by') === 'id' ? 'id' : 'created_at',
    ascending: single(params, 'sort_order') !== 'descending',
    perPage,
    page: positiveInteger(single(params, 'page'), 1, MAX_PAGE),
    emailQuery: emailQuery === null || emailQuery === '' ? null : normalizeEmail(emailQuery),
    after: null,
  };
}

/** The cursor's fields, short since it travels in URLs: sort, descending, query, email, created_at, id. */
type CursorFields = { s: 'created_at' | 'id'; d: boolean; q: string | null; e: string | null; c: number; i: string };

/** The cursor continuing `options` after `last` (the last user of the page just answered). */
export function nextCursor(options: ListOptions, last: ListPosition): string {
  if (options.email === 'none') throw new Error('an empty listing has no next page');
  const fields: CursorFields = { s: options.sortBy, d: !options.ascending, q: options.emailQuery, e: options.email, c: last.createdAt, i: last.id };
  return encodeCursor(fields);
}

const stringOrNull = (value: unknown, max: number) => value === null || (typeof value === 'string' && value.length <= max);

function readCursor(text: string | null): Omit<ListOptions, 'perPage' | 'page'> | undefined {
  const value = text === null ? undefined : (decodeCursor(text) as Partial<CursorFields> | undefined);
  if (typeof value !== 'object' || value === null) return undefined;
  const { s, d, q, e, c, i } = value;
  if ((s !== 'created_at' && s !== 'id') || typeof d !== 'boolean' || !stringOrNull(q, 1024) || !stringOrNull(e, 255)) return undefined;
  if (!Number.isSafeInteger(c) || typeof i !== 'string' || i.length === 0 || i.length > 255) return undefined;
  return { sortBy: s, ascending: !d, emailQuery: q ?? null, email: e ?? null, after: { createdAt: c as number, id: i } };
}
