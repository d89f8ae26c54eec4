import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { FormatRegistry } from 'elysia/type-system';
import { DOCUMENTED_AS, unixSeconds } from '../http/fields';
import { User } from '../users/model';
import type { ApiKeyRecord } from './store';

export const TAG = 'API keys';

/** How a verify ended, as /metrics counts it (API.md §18). */
export const VERIFY_RESULTS = ['valid', 'invalid', 'expired', 'insufficient_scope', 'user_disabled'] as const;
export type VerifyResult = (typeof VERIFY_RESULTS)[number];

/** API.md §18. */
export const MAX_API_KEYS_PER_USER = 100;
export const MAX_SCOPES = 32;
/** "At most 10 years ahead", as 10 × 365.25 days (as for disable, API.md §14). */
export const MAX_KEY_LIFETIME_SECONDS = 315_576_000;

const KEY_ID = 'q7m2x9kd4a8rfe3hn5pjc6wb';
const KEY_EXAMPLE = `gh_${KEY_ID}_Vh3Xk2pQ9sLmN4rT7wYz1aBcDeFgHiJkLmNoPqRsTuA`;

/** 1 to 64 code points, no control character (Unicode Cc), no lone surrogate. */
export const isApiKeyName = (value: string): boolean => {
  const length = [...value].length;
  return value.isWellFormed() && length >= 1 && length <= 64 && !/\p{Cc}/u.test(value);
};
FormatRegistry.Set('gatehouse-api-key-name', isApiKeyName);

const SCOPE_PATTERN = '^[a-z0-9:._-]{1,64}$';
export const isScope = (value: string): boolean => new RegExp(SCOPE_PATTERN).test(value);

const Scopes = (description: string) =>
  t.Array(t.String({ pattern: SCOPE_PATTERN, minLength: 1, maxLength: 64, examples: ['repo:read'] }), {
    maxItems: MAX_SCOPES,
    uniqueItems: true,
    description: `${description}: at most ${MAX_SCOPES} distinct strings of 1 to 64 characters of a-z 0-9 : . _ -`,
    examples: [['repo:read', 'repo:write']],
  });

export const ApiKey = t.Object({
  id: t.String({ examples: [KEY_ID] }),
  user_id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  name: t.String({ examples: ['CI deploys'] }),
  scopes: t.Array(t.String(), { description: "The application's own words, as given at creation", examples: [['repo:read']] }),
  created_at: unixSeconds(),
  expires_at: t.Union([unixSeconds('Unix seconds after which the key verifies as API_KEY_EXPIRED'), t.Null()], { description: 'null: never expires' }),
  last_used_at: t.Union([unixSeconds('Unix seconds of a successful verify, written at most once a minute'), t.Null()]),
  start: t.String({ description: "The key's first 12 characters, for people to recognise it", examples: [KEY_EXAMPLE.slice(0, 12)] }),
});
export type ApiKeyView = typeof ApiKey.static;

export const CreatedApiKey = t.Composite([
  ApiKey,
  t.Object({ key: t.String({ description: 'The key: shown only here, stored only as a hash', examples: [KEY_EXAMPLE] }) }),
]);
export type CreatedApiKeyView = typeof CreatedApiKey.static;

export const VerifiedApiKey = t.Object({ api_key: ApiKey, user: User });
export type VerifiedApiKeyView = typeof VerifiedApiKey.static;

export const toApiKeyView = (record: ApiKeyRecord): ApiKeyView => ({
  id: record.id,
  user_id: record.userId,
  name: record.name,
  scopes: record.scopes,
  created_at: record.createdAt,
  expires_at: record.expiresAt,
  last_used_at: record.lastUsedAt,
  start: record.start,
});

export const CreateApiKeyBody = t.Object({
  name: t.String({
    format: 'gatehouse-api-key-name',
    [DOCUMENTED_AS]: { minLength: 1, maxLength: 64, pattern: String.raw`^[^\p{Cc}\p{Cs}]*$` },
    description: '1 to 64 characters (Unicode code points), no control characters (Unicode Cc) and no lone surrogates',
    examples: ['CI deploys'],
  }),
  scopes: t.Optional(Scopes('What the key may do, in the application\'s own words; default none')),
  expires_at: t.Optional(
    t.Union([Type.Integer(), t.Null()], {
      description: `Unix seconds: later than now and at most 10 years (${MAX_KEY_LIFETIME_SECONDS.toLocaleString('en')} s) ahead, else INVALID_DATA. Absent or null: never expires.`,
      examples: [1795310920],
    }),
  ),
});

export const VerifyApiKeyBody = t.Object({
  key: t.String({ description: 'The key as the end user presented it; anything that is not a key Gatehouse issued is INVALID_API_KEY', examples: [KEY_EXAMPLE] }),
  scopes: t.Optional(Scopes('Scopes the key must all have, else INSUFFICIENT_SCOPE')),
});
