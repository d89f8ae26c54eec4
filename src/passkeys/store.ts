import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { isForeignKeyViolation, isUniqueViolation } from '../db/constraints';
import { challenges, passkeys, type PasskeyRow } from '../db/schema';

export interface PasskeyRecord {
  id: string;
  userId: string;
  /** base64url, unique across all users. */
  credentialId: string;
  /** base64url of the COSE key. */
  publicKey: string;
  counter: number;
  transports: string[];
  backedUp: boolean;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface ChallengeRecord {
  id: string;
  ceremony: 'registration' | 'authentication';
  /** Authentication only. */
  purpose: 'login' | 'second_factor' | null;
  userId: string | null;
  challenge: string;
  userVerification: 'required' | 'preferred';
  expiresAt: number;
}

export type RegisterOutcome = 'registered' | 'gone' | 'full' | 'duplicate';
export type UseOutcome = 'used' | 'gone' | 'stale';

/** What a successful assertion changes on its passkey. */
export interface PasskeyUse {
  passkeyId: string;
  counter: number;
  backedUp: boolean;
  nowSeconds: number;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface PasskeyStore {
  /** Oldest first, ties by id. */
  listOf(userId: string): Promise<PasskeyRecord[]>;
  find(userId: string, passkeyId: string): Promise<PasskeyRecord | undefined>;
  findByCredentialId(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** The renamed passkey, or undefined when it is gone. */
  rename(userId: string, passkeyId: string, name: string): Promise<PasskeyRecord | undefined>;
  /** False when there was none. */
  delete(userId: string, passkeyId: string): Promise<boolean>;
  /** False when the user no longer exists. */
  insertChallenge(record: ChallengeRecord): Promise<boolean>;
  /** A challenge that has not expired (`expires_at > now`), whatever its binding. */
  findLiveChallenge(id: string, nowSeconds: number): Promise<ChallengeRecord | undefined>;
  /** Consumes a live challenge after a failed verification; false when it was already gone. */
  consumeChallenge(id: string, nowSeconds: number): Promise<boolean>;
  /**
   * Consumes the challenge and, if that succeeded, inserts the passkey unless the user already has
   * `maxPerUser` or the credential id is registered (to anyone): the challenge stays consumed.
   */
  register(challengeId: string, nowSeconds: number, passkey: PasskeyRecord, maxPerUser: number): Promise<RegisterOutcome>;
  /**
   * Consumes the challenge and, if that succeeded, records the use on the passkey, provided the
   * counter still increases over the stored one (or both are 0): a parallel use may have moved it
   * since the verification read it. 'stale' (also when the passkey is gone) keeps the challenge consumed.
   */
  use(challengeId: string, use: PasskeyUse): Promise<UseOutcome>;
}

const toRecord = (row: PasskeyRow): PasskeyRecord => ({ ...row, transports: row.transports === '' ? [] : row.transports.split(',') });
const toRow = (record: PasskeyRecord) => ({ ...record, transports: record.transports.join(',') });
const liveChallenge = (id: string, nowSeconds: number) => and(eq(challenges.id, id), gt(challenges.expiresAt, nowSeconds));
const ofUser = (userId: string, passkeyId: string) => and(eq(passkeys.id, passkeyId), eq(passkeys.userId, userId));

export function sqlitePasskeyStore(db: Db): PasskeyStore {
  const byCredentialId = db.select().from(passkeys).where(eq(passkeys.credentialId, sql.placeholder('credentialId'))).prepare();
  const consume = (tx: Pick<Db, 'delete'>, id: string, nowSeconds: number) =>
    tx.delete(challenges).where(liveChallenge(id, nowSeconds)).returning({ id: challenges.id }).get() !== undefined;

  return {
    listOf: async (userId) =>
      db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)).all().map(toRecord),
    async find(userId, passkeyId) {
      const row = db.select().from(passkeys).where(ofUser(userId, passkeyId)).get();
      return row && toRecord(row);
    },
    async findByCredentialId(credentialId) {
      const row = byCredentialId.get({ credentialId });
      return row && toRecord(row);
    },
    async rename(userId, passkeyId, name) {
      const row = db.update(passkeys).set({ name }).where(ofUser(userId, passkeyId)).returning().get();
      return row && toRecord(row);
    },
    delete: async (userId, passkeyId) => db.delete(passkeys).where(ofUser(userId, passkeyId)).returning({ id: passkeys.id }).get() !== undefined,
    async insertChallenge(record) {
      try {
        db.insert(challenges).values(record).run();
        return true;
      } catch (error) {
        if (isForeignKeyViolation(error)) return false;
        throw error;
      }
    },
    findLiveChallenge: async (id, nowSeconds) => db.select().from(challenges).where(liveChallenge(id, nowSeconds)).get(),
    consumeChallenge: async (id, nowSeconds) => consume(db, id, nowSeconds),
    async register(challengeId, nowSeconds, passkey, maxPerUser) {
      return db.transaction((tx): RegisterOutcome => {
        if (!consume(tx, challengeId, nowSeconds)) return 'gone';
        const held = tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, passkey.userId)).get()?.n ?? 0;
        if (held >= maxPerUser) return 'full';
        try {
          tx.insert(passkeys).values(toRow(passkey)).run();
          return 'registered';
        } catch (error) {
          // SQLite undoes only the failed statement: the challenge stays consumed.
          if (isUniqueViolation(error)) return 'duplicate';
          if (isForeignKeyViolation(error)) return 'gone';
          throw error;
        }
      });
    },
    async use(challengeId, { passkeyId, counter, backedUp, nowSeconds }) {
      return db.transaction((tx): UseOutcome => {
        if (!consume(tx, challengeId, nowSeconds)) return 'gone';
        // The library's rule again, against the counter as it is now.
        const stillIncreasing = sql`(${passkeys.counter} < ${counter} or (${passkeys.counter} = 0 and ${counter} = 0))`;
        const updated = tx
          .update(passkeys)
          .set({ counter, backedUp, lastUsedAt: nowSeconds })
          .where(and(eq(passkeys.id, passkeyId), stillIncreasing))
          .returning({ id: passkeys.id })
          .get();
        return updated === undefined ? 'stale' : 'used';
      });
    },
  };
}
