import { and, asc, count, eq, isNull, lte, or, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { inTransaction, lockUser } from '../db/pg-transaction';
import { apiKeys, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import { userViewColumns } from '../users/store.pg';
import { toApiKeyRecord, toApiKeyRow, type ApiKeyStore, type InsertOutcome } from './store';

const ofUser = (userId: string, keyId: string) => and(eq(apiKeys.id, keyId), eq(apiKeys.userId, userId));
const placeholder = sql.placeholder;

/** The PostgreSQL twin of sqliteApiKeyStore; a key's writes lock its user first (the lock order). */
export function postgresApiKeyStore(db: PgDb, append: AppendEventsPg): ApiKeyStore {
  const withOwner = db
    .select({ key: apiKeys, owner: userViewColumns })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(eq(apiKeys.id, placeholder('id')))
    .prepare('api_key_with_owner');
  const use = db
    .update(apiKeys)
    .set({ lastUsedAt: sql`${placeholder('now')}` })
    .where(and(eq(apiKeys.id, placeholder('id')), or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, placeholder('since')))))
    .returning({ id: apiKeys.id })
    .prepare('api_key_use');

  return {
    listOf: async (userId) =>
      (await db.select().from(apiKeys).where(eq(apiKeys.userId, userId)).orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))).map(toApiKeyRecord),
    async find(userId, keyId) {
      const [row] = await db.select().from(apiKeys).where(ofUser(userId, keyId));
      return row && toApiKeyRecord(row);
    },
    async findWithOwner(keyId) {
      const [row] = await withOwner.execute({ id: keyId });
      return row && { key: toApiKeyRecord(row.key), owner: row.owner };
    },
    /** The user's row lock makes parallel creations for one user count one after another, so the limit holds. */
    insert: (record, maxPerUser, events, refuses) =>
      inTransaction(db, async (tx): Promise<InsertOutcome> => {
        if (!(await lockUser(tx, record.userId))) return 'gone';
        const [owner] = await tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, record.userId));
        if (owner === undefined) return 'gone';
        if (refuses(owner)) return 'refused';
        const [held] = await tx.select({ n: count() }).from(apiKeys).where(eq(apiKeys.userId, record.userId));
        if ((held?.n ?? 0) >= maxPerUser) return 'full';
        await tx.insert(apiKeys).values(toApiKeyRow(record));
        await append(tx, events);
        return 'created';
      }),
    delete: (userId, keyId, events) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, userId))) return false;
        const deleted = await tx.delete(apiKeys).where(ofUser(userId, keyId)).returning({ id: apiKeys.id });
        if (deleted.length > 0) await append(tx, events);
        return deleted.length > 0;
      }),
    deleteAllOf: (userId, events) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, userId))) return;
        const deleted = await tx.delete(apiKeys).where(eq(apiKeys.userId, userId)).returning({ id: apiKeys.id });
        if (deleted.length > 0) await append(tx, events(deleted.map((row) => row.id)));
      }),
    recordUse: async (keyId, now, interval) => (await use.execute({ id: keyId, now, since: now - interval })).length > 0,
  };
}
