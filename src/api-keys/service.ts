import { AppError } from '../errors';
import { draft } from '../events/model';
import { generateApiKey, parseApiKey, secretMatches } from '../security/api-key-secret';
import { nowSeconds, type Clock } from '../security/clock';
import { isDisabled, toUserView } from '../users/model';
import { MAX_API_KEYS_PER_USER, MAX_KEY_LIFETIME_SECONDS, toApiKeyView, type ApiKeyView, type VerifyResult, type CreatedApiKeyView, type VerifiedApiKeyView } from './model';
import type { ApiKeyRecord, ApiKeyStore, KeyWithOwner } from './store';

/** last_used_at is written at most this often per key (API.md §18): a verify is a read, not a write. */
export const LAST_USED_INTERVAL_SECONDS = 60;

const REFUSALS = {
  invalid: 'INVALID_API_KEY',
  expired: 'API_KEY_EXPIRED',
  insufficient_scope: 'INSUFFICIENT_SCOPE',
  user_disabled: 'USER_DISABLED',
} as const;

export interface ApiKeysDeps {
  store: ApiKeyStore;
  clock: Clock;
  /** Told every verify's result; absent with --no-metrics. */
  countVerify?: (result: VerifyResult) => void;
}

export interface NewApiKey {
  name: string;
  scopes?: string[];
  expiresAt?: number | null;
}

/** End-user API keys (API.md §18): the key is shown once; only the SHA-256 of its random part is kept. */
export function createApiKeysService({ store, clock, countVerify }: ApiKeysDeps) {
  const now = () => nowSeconds(clock);
  const refuse = (result: Exclude<VerifyResult, 'valid'>): never => {
    countVerify?.(result);
    throw new AppError(REFUSALS[result]);
  };

  /** Checks in the order of API.md §18's list; the owner's state comes last, as for every credential check (§14). */
  function judge(found: KeyWithOwner | undefined, secret: string, required: readonly string[], time: number): KeyWithOwner {
    if (found === undefined || !secretMatches(secret, found.key.secretHash)) return refuse('invalid');
    if (found.key.expiresAt !== null && found.key.expiresAt <= time) return refuse('expired');
    if (!required.every((scope) => found.key.scopes.includes(scope))) return refuse('insufficient_scope');
    if (isDisabled(found.owner, time)) return refuse('user_disabled');
    return found;
  }

  return {
    list: async (userId: string): Promise<ApiKeyView[]> => (await store.listOf(userId)).map(toApiKeyView),
    find: (userId: string, keyId: string) => store.find(userId, keyId),

    /** INVALID_DATA for an expiry out of bounds, then USER_DISABLED, then the cap (NOT_ALLOWED), decided where the key is written. */
    async create(userId: string, input: NewApiKey): Promise<CreatedApiKeyView> {
      const time = now();
      const expiresAt = input.expiresAt ?? null;
      if (expiresAt !== null && (expiresAt <= time || expiresAt > time + MAX_KEY_LIFETIME_SECONDS)) throw new AppError('INVALID_DATA');
      const { id, key, secretHash, start } = generateApiKey();
      const record: ApiKeyRecord = { id, userId, name: input.name, scopes: input.scopes ?? [], secretHash, start, createdAt: time, expiresAt, lastUsedAt: null };
      const events = [draft('api_key.created', time, userId)];
      const outcome = await store.insert(record, MAX_API_KEYS_PER_USER, events, (owner) => isDisabled(owner, time));
      if (outcome === 'gone') throw new AppError('NOT_FOUND');
      if (outcome === 'refused') throw new AppError('USER_DISABLED');
      if (outcome === 'full') throw new AppError('NOT_ALLOWED');
      return { ...toApiKeyView(record), key };
    },

    async delete(userId: string, keyId: string): Promise<void> {
      if (!(await store.delete(userId, keyId, [draft('api_key.deleted', now(), userId)]))) throw new AppError('NOT_FOUND');
    },

    deleteAllOf: (userId: string) => store.deleteAllOf(userId, (ids) => ids.map(() => draft('api_key.deleted', now(), userId))),

    /**
     * A malformed key is refused before any storage is read; a well-formed one costs one lookup by id
     * and a constant-time comparison. last_used_at is written only when it is a minute old or more.
     * A store that answers at once (SQLite) gives the view, not a Promise: the verify is a hot path.
     */
    verify(key: string, required: readonly string[] = []): VerifiedApiKeyView | Promise<VerifiedApiKeyView> {
      const parsed = parseApiKey(key);
      if (parsed === undefined) return refuse('invalid');
      const found = store.findWithOwner(parsed.id);
      return found instanceof Promise ? found.then((f) => conclude(f, parsed.secret, required)) : conclude(found, parsed.secret, required);
    },
  };

  function conclude(found: KeyWithOwner | undefined, secret: string, required: readonly string[]): VerifiedApiKeyView | Promise<VerifiedApiKeyView> {
    const time = now();
    const { key: record, owner } = judge(found, secret, required, time);
    const answer = (lastUsedAt: number | null): VerifiedApiKeyView => {
      countVerify?.('valid');
      return { api_key: toApiKeyView({ ...record, lastUsedAt }), user: toUserView(owner, time) };
    };
    if (record.lastUsedAt !== null && record.lastUsedAt > time - LAST_USED_INTERVAL_SECONDS) return answer(record.lastUsedAt);
    return store.recordUse(record.id, time, LAST_USED_INTERVAL_SECONDS).then((written) => answer(written ? time : record.lastUsedAt));
  }
}
export type ApiKeysService = ReturnType<typeof createApiKeysService>;
