import { and, eq, sql } from 'drizzle-orm';
import { isLive, recordWrongCode, sqliteRequestRows, type CountedRequests, type WrongCodeOutcome } from '../code-requests/store';
import type { Db } from '../db/client';
import { passwordResetRequests as resets, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import { isFirstProof, type Revocation } from '../first-proof/service';
import { revokeUnproven } from '../first-proof/store';
import type { DisabledState } from '../users/model';

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
   * user's other requests, at once: of parallel redemptions exactly one finds the request. The user's
   * state is read in the same transaction: `refused` (nothing changed) when `refuses` it (disabled,
   * API.md §14); `unproven` (nothing changed) when the address is verified for the first time and no
   * `revocation` was given (API.md §15), else that revocation is applied with it.
   */
  redeem(id: string, nowSeconds: number, passwordHash: string, events: EventDraft[], refuses: (user: DisabledState) => boolean, revocation?: Revocation): Promise<ResetOutcome>;
}

export type ResetOutcome = 'reset' | 'gone' | 'refused' | 'unproven';

const ownerColumns = { email: users.email, emailVerified: users.emailVerified, disabled: users.disabled, disabledUntil: users.disabledUntil };

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
    async redeem(id, nowSeconds, passwordHash, events, refuses, revocation) {
      return db.transaction((tx): ResetOutcome => {
        const found = tx.select({ userId: resets.userId }).from(resets).where(and(eq(resets.id, id), live(nowSeconds))).get();
        if (found === undefined) return 'gone';
        const user = tx.select(ownerColumns).from(users).where(eq(users.id, found.userId)).get();
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        const firstProof = isFirstProof(user);
        if (firstProof && revocation === undefined) return 'unproven';
        tx.delete(resets).where(eq(resets.id, id)).run();
        tx.update(users).set({ passwordHash, emailVerified: hasEmail }).where(eq(users.id, found.userId)).run();
        tx.delete(resets).where(eq(resets.userId, found.userId)).run();
        append(tx, events);
        if (firstProof) revokeUnproven(tx, append, found.userId, revocation!);
        return 'reset';
      });
    },
  };
}
