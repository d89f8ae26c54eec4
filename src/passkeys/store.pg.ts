import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import type { PgDb } from '../db/pg-client';
import { writtenUnlessUserGone } from '../db/pg-errors';
import { inTransaction, lockOwner, lockUser } from '../db/pg-transaction';
import { challenges, passkeys, users, type PasskeyRow } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { ChallengeRecord, PasskeyRecord, PasskeyStore, RegisterOutcome, UseOutcome } from './store';

const toRecord = (row: PasskeyRow): PasskeyRecord => ({ ...row, transports: row.transports === '' ? [] : row.transports.split(',') });
const toRow = (record: PasskeyRecord) => ({ ...record, transports: record.transports.join(',') });
const ofUser = (userId: string, passkeyId: string) => and(eq(passkeys.id, passkeyId), eq(passkeys.userId, userId));
const stateOf = async (tx: Pick<PgDb, 'select'>, userId: string) =>
  (await tx.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, userId)))[0];
const liveChallenge = (id: string, nowSeconds: number) => and(eq(challenges.id, id), gt(challenges.expiresAt, nowSeconds));

/** The PostgreSQL twin of sqlitePasskeyStore: each unit one conditional statement or one short transaction. */
export function postgresPasskeyStore(db: PgDb, append: AppendEventsPg): PasskeyStore {
  const byCredentialId = db.select().from(passkeys).where(eq(passkeys.credentialId, sql.placeholder('credentialId'))).prepare('passkey_by_credential');
  const consume = (tx: Pick<PgDb, 'delete'>, id: string, now: number) =>
    tx.delete(challenges).where(liveChallenge(id, now)).returning({ id: challenges.id });

  return {
    listOf: async (userId) =>
      (await db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id))).map(toRecord),
    async find(userId, passkeyId) {
      const [row] = await db.select().from(passkeys).where(ofUser(userId, passkeyId));
      return row && toRecord(row);
    },
    async findByCredentialId(credentialId) {
      const [row] = await byCredentialId.execute({ credentialId });
      return row && toRecord(row);
    },
    async rename(userId, passkeyId, name) {
      const [row] = await db.update(passkeys).set({ name }).where(ofUser(userId, passkeyId)).returning();
      return row && toRecord(row);
    },
    delete: (userId, passkeyId, events) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, userId))) return false;
        const deleted = await tx.delete(passkeys).where(ofUser(userId, passkeyId)).returning({ id: passkeys.id });
        if (deleted.length > 0) await append(tx, events);
        return deleted.length > 0;
      }),
    insertChallenge: async (record: ChallengeRecord) => writtenUnlessUserGone(db.insert(challenges).values(record)),
    findLiveChallenge: async (id, now) => (await db.select().from(challenges).where(liveChallenge(id, now)))[0],
    // A challenge bound to a user is that user's row: the user is locked first (a login challenge has none).
    consumeChallenge: (id, now, events) =>
      inTransaction(db, async (tx) => {
        await lockOwner(tx, challenges.userId, challenges.id, id);
        if ((await consume(tx, id, now)).length === 0) return false;
        await append(tx, events);
        return true;
      }),
    /**
     * The user's row lock, taken first (the lock order), makes parallel registrations of one user count
     * one after another, so the limit holds; ON CONFLICT DO NOTHING reports a registered credential id
     * without aborting the transaction, so the challenge stays consumed as the SQLite store leaves it.
     */
    register: (challengeId, now, passkey, maxPerUser, events, refuses) =>
      inTransaction(db, async (tx): Promise<RegisterOutcome> => {
        if (!(await lockUser(tx, passkey.userId))) return 'gone';
        const owner = await stateOf(tx, passkey.userId);
        if (owner !== undefined && refuses(owner)) return 'refused';
        if ((await consume(tx, challengeId, now)).length === 0) return 'gone';
        const [held] = await tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, passkey.userId));
        if ((held?.n ?? 0) >= maxPerUser) return 'full';
        const inserted = await tx.insert(passkeys).values(toRow(passkey)).onConflictDoNothing({ target: passkeys.credentialId }).returning({ id: passkeys.id });
        if (inserted.length === 0) return 'duplicate';
        await append(tx, events);
        return 'registered';
      }),
    use: (challengeId, { passkeyId, counter, backedUp, nowSeconds: now }, events, refuses) =>
      inTransaction(db, async (tx): Promise<UseOutcome> => {
        // Under the owner's lock its state is final until commit: a disable waits, or was seen.
        const ownerId = await lockOwner(tx, passkeys.userId, passkeys.id, passkeyId);
        const owner = ownerId === undefined ? undefined : await stateOf(tx, ownerId);
        if (owner !== undefined && refuses(owner)) return 'refused';
        if ((await consume(tx, challengeId, now)).length === 0) return 'gone';
        // The library's counter rule again, against the counter as it is now (the UPDATE waits on a parallel use).
        const updated = await tx
          .update(passkeys)
          .set({ counter, backedUp, lastUsedAt: now })
          .where(and(eq(passkeys.id, passkeyId), sql`(${passkeys.counter} < ${counter} or (${passkeys.counter} = 0 and ${counter} = 0))`))
          .returning({ id: passkeys.id });
        const outcome = updated.length === 0 ? 'stale' : 'used';
        await append(tx, events(outcome));
        return outcome;
      }),
  };
}
