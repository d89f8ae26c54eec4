import { and, eq, sql } from 'drizzle-orm';
import { isLive, recordWrongCode, sqliteRequestRows, type CountedRequests, type WrongCodeOutcome } from '../code-requests/store';
import type { Db } from '../db/client';
import { passwordResetRequests as resets, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

/** A flow that proves the user reads their mail marks a stored address verified; with no address the flag stays false. */
const hasEmail = sql<boolean>`${users.email} is not null`;

export interface ResetRequestRecord {
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  failedAttempts: number;
  /** SHA-256 of the upper-cased code; the code itself is never stored. */
  codeHash: string;
  emailVerified: boolean;
}

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface PasswordResetStore {
  /** False when the user no longer exists. */
  insert(record: ResetRequestRecord): Promise<boolean>;
  findLive(id: string, nowSeconds: number): Promise<ResetRequestRecord | undefined>;
  /** Oldest first, ties by id. */
  listLive(userId: string, nowSeconds: number): Promise<ResetRequestRecord[]>;
  /** False when there was no such request (a parallel delete or redemption took it). */
  delete(id: string): Promise<boolean>;
  deleteAllOf(userId: string): Promise<void>;
  /** False when the request vanished (invalidated, expired) since it was loaded. */
  markVerified(id: string, nowSeconds: number): Promise<boolean>;
  /** The request's own counter; the 5th wrong code deletes it. */
  recordWrongCode(id: string, nowSeconds: number): Promise<WrongCodeOutcome>;
  /**
   * Consumes the request, sets the password (and marks a stored email verified) and invalidates the
   * user's other requests, at once: of parallel redemptions exactly one finds the request. False when gone.
   */
  redeem(id: string, nowSeconds: number, passwordHash: string, events: EventDraft[]): Promise<boolean>;
}

const counted: CountedRequests = { table: resets, key: resets.id };
const live = (nowSeconds: number) => isLive(resets.expiresAt, nowSeconds);

export function sqlitePasswordResetStore(db: Db, append: AppendEvents): PasswordResetStore {
  return {
    ...sqliteRequestRows(db, resets),
    delete: async (id) => db.delete(resets).where(eq(resets.id, id)).returning({ id: resets.id }).all().length > 0,
    async markVerified(id, nowSeconds) {
      const row = db.update(resets).set({ emailVerified: true }).where(and(eq(resets.id, id), live(nowSeconds))).returning({ id: resets.id }).get();
      return row !== undefined;
    },
    recordWrongCode: async (id, nowSeconds) => recordWrongCode(db, counted, id, nowSeconds),
    async redeem(id, nowSeconds, passwordHash, events) {
      return db.transaction((tx) => {
        const request = tx.delete(resets).where(and(eq(resets.id, id), live(nowSeconds))).returning({ userId: resets.userId }).get();
        if (request === undefined) return false;
        tx.update(users).set({ passwordHash, emailVerified: hasEmail }).where(eq(users.id, request.userId)).run();
        tx.delete(resets).where(eq(resets.userId, request.userId)).run();
        append(tx, events);
        return true;
      });
    },
  };
}
