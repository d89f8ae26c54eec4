import { and, eq, sql } from 'drizzle-orm';
import { isLive, recordWrongCode, type CountedRequests, type WrongCodeOutcome } from '../code-requests/store';
import type { Db } from '../db/client';
import { writtenUnlessUserGone } from '../db/constraints';
import { emailVerificationRequests as requests, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

/** A flow that proves the user reads their mail marks a stored address verified; with no address the flag stays false. */
const hasEmail = sql<boolean>`${users.email} is not null`;

export interface VerificationRecord {
  userId: string;
  createdAt: number;
  expiresAt: number;
  failedAttempts: number;
  /** Returned by GET (API.md §3), so it is kept as issued rather than hashed. */
  code: string;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface EmailVerificationStore {
  findLive(userId: string, nowSeconds: number): Promise<VerificationRecord | undefined>;
  /** One request per user: a new one replaces the old code, expiry and count. False when the user is gone. */
  replace(record: VerificationRecord): Promise<boolean>;
  /** False when nothing live was there to delete. */
  deleteLive(userId: string, nowSeconds: number): Promise<boolean>;
  /** The request's own counter, and the wrong code's events; the 5th wrong code deletes it. */
  recordWrongCode(userId: string, nowSeconds: number, events: EventDraft[]): Promise<WrongCodeOutcome>;
  /**
   * Deletes the very request whose code was checked and marks the user's email verified, at once.
   * False when it was already redeemed, replaced or expired: a code works once.
   */
  redeem(checked: VerificationRecord, nowSeconds: number, events: EventDraft[]): Promise<boolean>;
}

const counted: CountedRequests = { table: requests, key: requests.userId };
const liveFor = (userId: string, nowSeconds: number) => and(eq(requests.userId, userId), isLive(requests.expiresAt, nowSeconds));

export function sqliteEmailVerificationStore(db: Db, append: AppendEvents): EmailVerificationStore {
  return {
    findLive: async (userId, nowSeconds) => db.select().from(requests).where(liveFor(userId, nowSeconds)).get(),
    async replace(record) {
      const { userId: _, ...fresh } = record;
      return writtenUnlessUserGone(() => db.insert(requests).values(record).onConflictDoUpdate({ target: requests.userId, set: fresh }).run());
    },
    deleteLive: async (userId, nowSeconds) =>
      db.delete(requests).where(liveFor(userId, nowSeconds)).returning({ userId: requests.userId }).get() !== undefined,
    recordWrongCode: async (userId, nowSeconds, events) => recordWrongCode(db, counted, userId, nowSeconds, (tx) => append(tx, events)),
    async redeem(checked, nowSeconds, events) {
      return db.transaction((tx) => {
        const claimed = tx
          .delete(requests)
          .where(and(liveFor(checked.userId, nowSeconds), eq(requests.code, checked.code)))
          .returning({ userId: requests.userId })
          .get();
        if (claimed === undefined) return false;
        tx.update(users).set({ emailVerified: hasEmail }).where(eq(users.id, checked.userId)).run();
        append(tx, events);
        return true;
      });
    },
  };
}
