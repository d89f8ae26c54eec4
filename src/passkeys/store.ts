import { and, asc, count, eq, getTableColumns, gt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { isForeignKeyViolation, isUniqueViolation, writtenUnlessUserGone } from '../db/constraints';
import { groupCommit } from '../db/group-commit';
import { challenges, passkeys, users, type PasskeyRow } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import type { DisabledState } from '../users/model';

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

/** `refused`: the user's state, read in the write's own transaction, refuses it (disabled, API.md §14); nothing changed, the challenge stays unused. */
export type RegisterOutcome = 'registered' | 'gone' | 'full' | 'duplicate' | 'refused';
export type UseOutcome = 'used' | 'gone' | 'stale' | 'refused';
export type RefusesUser = (user: DisabledState) => boolean;

/** What a successful assertion changes on its passkey. */
export interface PasskeyUse {
  passkeyId: string;
  counter: number;
  backedUp: boolean;
  nowSeconds: number;
}

/**
 * Each method is one atomic unit (API.md §1, Atomicity). On SQLite the units of a login share
 * commits (db/group-commit.ts); on another database each can be a plain transaction.
 */
export interface PasskeyStore {
  /** Oldest first, ties by id. */
  listOf(userId: string): Promise<PasskeyRecord[]>;
  find(userId: string, passkeyId: string): Promise<PasskeyRecord | undefined>;
  findByCredentialId(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** The renamed passkey, or undefined when it is gone. */
  rename(userId: string, passkeyId: string, name: string): Promise<PasskeyRecord | undefined>;
  /** False when there was none. */
  delete(userId: string, passkeyId: string, events: EventDraft[]): Promise<boolean>;
  /** False when the user no longer exists. */
  insertChallenge(record: ChallengeRecord): Promise<boolean>;
  /** A challenge that has not expired (`expires_at > now`), whatever its binding. */
  findLiveChallenge(id: string, nowSeconds: number): Promise<ChallengeRecord | undefined>;
  /** Consumes a live challenge after a failed verification; false when it was already gone. */
  consumeChallenge(id: string, nowSeconds: number, events: EventDraft[]): Promise<boolean>;
  /**
   * Consumes the challenge and, if that succeeded, inserts the passkey unless the user already has
   * `maxPerUser` or the credential id is registered (to anyone): the challenge stays consumed.
   */
  register(challengeId: string, nowSeconds: number, passkey: PasskeyRecord, maxPerUser: number, events: EventDraft[], refuses: RefusesUser): Promise<RegisterOutcome>;
  /**
   * Consumes the challenge and, if that succeeded, records the use on the passkey, provided the
   * counter still increases over the stored one (or both are 0): a parallel use may have moved it
   * since the verification read it. 'stale' (also when the passkey is gone) keeps the challenge consumed.
   */
  use(challengeId: string, use: PasskeyUse, events: (outcome: 'used' | 'stale') => EventDraft[], refuses: RefusesUser): Promise<UseOutcome>;
}

const toRecord = (row: PasskeyRow): PasskeyRecord => ({ ...row, transports: row.transports === '' ? [] : row.transports.split(',') });
const toRow = (record: PasskeyRecord) => ({ ...record, transports: record.transports.join(',') });
const ofUser = (userId: string, passkeyId: string) => and(eq(passkeys.id, passkeyId), eq(passkeys.userId, userId));
const placeholder = sql.placeholder;
const liveChallenge = and(eq(challenges.id, placeholder('id')), gt(challenges.expiresAt, placeholder('now')));

/** The statements of every login are prepared once: building and compiling them cost more than running them. */
function prepare(db: Db) {
  return {
    ownerState: db
      .select({ disabled: users.disabled, disabledUntil: users.disabledUntil })
      .from(passkeys)
      .innerJoin(users, eq(users.id, passkeys.userId))
      .where(eq(passkeys.id, placeholder('id')))
      .prepare(),
    userState: db.select({ disabled: users.disabled, disabledUntil: users.disabledUntil }).from(users).where(eq(users.id, placeholder('id'))).prepare(),
    byCredentialId: db.select().from(passkeys).where(eq(passkeys.credentialId, placeholder('credentialId'))).prepare(),
    findChallenge: db.select().from(challenges).where(liveChallenge).prepare(),
    consume: db.delete(challenges).where(liveChallenge).returning({ id: challenges.id }).prepare(),
    insertChallenge: db
      .insert(challenges)
      .values(Object.fromEntries(Object.keys(getTableColumns(challenges)).map((key) => [key, placeholder(key)])) as never)
      .prepare(),
    // The library's counter rule again, against the counter as it is now.
    recordUse: db
      .update(passkeys)
      .set({ counter: placeholder('counter') as never, backedUp: placeholder('backedUp') as never, lastUsedAt: placeholder('now') as never })
      .where(and(eq(passkeys.id, placeholder('id')), sql`(${passkeys.counter} < ${placeholder('counter')} or (${passkeys.counter} = 0 and ${placeholder('counter')} = 0))`))
      .returning({ id: passkeys.id })
      .prepare(),
  };
}

export function sqlitePasskeyStore(db: Db, append: AppendEvents): PasskeyStore {
  // Group-commit units run on the same connection inside the batch's transaction.
  const tx = db as unknown as Tx;
  const statements = prepare(db);
  const consume = (id: string, now: number) => statements.consume.get({ id, now }) !== undefined;
  // The writes of every login (a challenge, then its use) share commits with their neighbours.
  const commit = groupCommit(db.$client);

  return {
    listOf: async (userId) =>
      db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id)).all().map(toRecord),
    async find(userId, passkeyId) {
      const row = db.select().from(passkeys).where(ofUser(userId, passkeyId)).get();
      return row && toRecord(row);
    },
    async findByCredentialId(credentialId) {
      const row = statements.byCredentialId.get({ credentialId });
      return row && toRecord(row);
    },
    async rename(userId, passkeyId, name) {
      const row = db.update(passkeys).set({ name }).where(ofUser(userId, passkeyId)).returning().get();
      return row && toRecord(row);
    },
    delete: async (userId, passkeyId, events) =>
      db.transaction((t) => {
        const deleted = t.delete(passkeys).where(ofUser(userId, passkeyId)).returning({ id: passkeys.id }).get() !== undefined;
        if (deleted) append(t, events);
        return deleted;
      }),
    insertChallenge: (record) =>
      commit(() => writtenUnlessUserGone(() => statements.insertChallenge.run({ ...record }))),
    findLiveChallenge: async (id, now) => statements.findChallenge.get({ id, now }),
    consumeChallenge: (id, now, events) =>
      commit(() => {
        if (!consume(id, now)) return false;
        append(tx, events);
        return true;
      }),
    async register(challengeId, now, passkey, maxPerUser, events, refuses) {
      return db.transaction((tx): RegisterOutcome => {
        const owner = statements.userState.get({ id: passkey.userId });
        if (owner !== undefined && refuses(owner)) return 'refused';
        if (!consume(challengeId, now)) return 'gone';
        const held = tx.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, passkey.userId)).get()?.n ?? 0;
        if (held >= maxPerUser) return 'full';
        try {
          tx.insert(passkeys).values(toRow(passkey)).run();
        } catch (error) {
          // SQLite undoes only the failed statement: the challenge stays consumed.
          if (isUniqueViolation(error)) return 'duplicate';
          if (isForeignKeyViolation(error)) return 'gone';
          throw error;
        }
        append(tx, events);
        return 'registered';
      });
    },
    use: (challengeId, { passkeyId, counter, backedUp, nowSeconds: now }, events, refuses) =>
      commit((): UseOutcome => {
        const owner = statements.ownerState.get({ id: passkeyId });
        if (owner !== undefined && refuses(owner)) return 'refused';
        if (!consume(challengeId, now)) return 'gone';
        const updated = statements.recordUse.get({ id: passkeyId, counter, backedUp: backedUp ? 1 : 0, now });
        const outcome = updated === undefined ? 'stale' : 'used';
        append(tx, events(outcome));
        return outcome;
      }),
  };
}
