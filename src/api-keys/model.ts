import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { FormatRegistry } from 'elysia/type-system';
import { DOCUMENTED_AS, unixSeconds } from '../http/fields';
import { apiKeyStart, isApiKeyId, isSecretHash } from '../security/api-key-secret';
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

/** A key in an export line (API.md §11, §18): its hash, never the key; `start` follows from the id. */
export type TransferApiKey = Omit<ApiKeyRecord, 'userId'>;
const json = JSON.stringify;
export const apiKeyJson = (k: TransferApiKey): string =>
  `{"id":${json(k.id)},"name":${json(k.name)},"scopes":${json(k.scopes)},"secret_hash":${json(k.secretHash)},` +
  `"created_at":${k.createdAt},"expires_at":${json(k.expiresAt)},"last_used_at":${json(k.lastUsedAt)}}`;

/** 9999-12-31T23:59:59Z, as for every time of an import line. */
const MAX_TIME = 253_402_300_799;
const time = (value: unknown): boolean => value === undefined || value === null || (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= MAX_TIME);
const orNull = (value: unknown): number | null => (value === undefined || value === null ? null : (value as number));

/**
 * The `api_keys` of an import line, checked as the API checks a creation, except that an
 * `expires_at` in the past is taken (the key then verifies as API_KEY_EXPIRED). A problem goes to `invalid`.
 */
export function readTransferApiKeys(value: unknown, now: number, invalid: (field: string, detail: string) => never): TransferApiKey[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return invalid('api_keys', 'must be a list of API keys, or null');
  if (value.length > MAX_API_KEYS_PER_USER) return invalid('api_keys', `at most ${MAX_API_KEYS_PER_USER} API keys a user`);
  const keys: TransferApiKey[] = [];
  for (const [i, item] of value.entries()) {
    const at = `api_keys[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return invalid(at, 'must be an object');
    const { id, name, scopes = [], secret_hash: hash, created_at: createdAt, expires_at: expiresAt, last_used_at: lastUsedAt } = item as Record<string, unknown>;
    if (typeof id !== 'string' || !isApiKeyId(id)) return invalid(`${at}.id`, 'must be 24 characters of abcdefghijkmnpqrstuvwxyz23456789');
    if (keys.some((key) => key.id === id)) return invalid(`${at}.id`, 'already in this line');
    if (typeof name !== 'string' || !isApiKeyName(name)) return invalid(`${at}.name`, 'must be 1 to 64 characters, no control characters');
    const scopeList = scopes ?? [];
    const scopesOk = Array.isArray(scopeList) && scopeList.length <= MAX_SCOPES && new Set(scopeList).size === scopeList.length && scopeList.every((s) => typeof s === 'string' && isScope(s));
    if (!scopesOk) return invalid(`${at}.scopes`, `must be at most ${MAX_SCOPES} distinct strings of 1 to 64 of a-z 0-9 : . _ -`);
    if (typeof hash !== 'string' || !isSecretHash(hash)) return invalid(`${at}.secret_hash`, 'must be 64 lower-case hex digits (SHA-256)');
    for (const [field, given] of [['created_at', createdAt], ['expires_at', expiresAt], ['last_used_at', lastUsedAt]] as const) {
      if (!time(given)) return invalid(`${at}.${field}`, `must be a whole number from 0 to ${MAX_TIME}, or null`);
    }
    keys.push({ id, name, scopes: scopeList as string[], secretHash: hash, start: apiKeyStart(id), createdAt: orNull(createdAt) ?? now, expiresAt: orNull(expiresAt), lastUsedAt: orNull(lastUsedAt) });
  }
  return keys;
}

/** Stored keys as JSON text (export's subquery), oldest first: `scopes` still joined by spaces. */
export const toTransferApiKeys = (text: string | null): TransferApiKey[] =>
  text === null ? [] : (JSON.parse(text) as (Omit<TransferApiKey, 'scopes'> & { scopes: string })[]).map((k) => ({ ...k, scopes: k.scopes === '' ? [] : k.scopes.split(' ') }));
