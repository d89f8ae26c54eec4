import { and, eq, ne } from 'drizzle-orm';
import { isLive, recordWrongCode, sqliteRequestRows, type CountedRequests, type WrongCodeOutcome } from '../code-requests/store';
import type { Db } from '../db/client';
import { emailSignInRequests, emailUpdateRequests as requests, passwordResetRequests, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';

export interface UpdateRequestRecord {
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  failedAttempts: number;
  /** The new address, normalised. */
  email: string;
  /** Returned by GET (API.md §3), so it is kept as issued rather than hashed. */
  code: string;
}

export type EmailUpdateOutcome = 'updated' | 'gone' | 'taken';

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface EmailUpdateStore {
  /** Whether a user other than `userId` holds the (normalised) address. */
  heldByOther(email: string, userId: string): Promise<boolean>;
  /** False when the user no longer exists. */
  insert(record: UpdateRequestRecord): Promise<boolean>;
  /** Oldest first, ties by id. */
  listLive(userId: string, nowSeconds: number): Promise<UpdateRequestRecord[]>;
  deleteAllOf(userId: string): Promise<void>;
  findLive(id: string, nowSeconds: number): Promise<UpdateRequestRecord | undefined>;
  /** False when nothing live was there to delete. */
  deleteLive(id: string, nowSeconds: number): Promise<boolean>;
  /** The request's own counter, and the wrong code's events; the 5th wrong code deletes it. */
  recordWrongCode(id: string, nowSeconds: number, events: EventDraft[]): Promise<WrongCodeOutcome>;
  /**
   * Claims (deletes) the request so it is redeemed once; if another user took the address meanwhile,
   * stops there ('taken', the request stays invalidated); else sets the address as verified and
   * invalidates every request for that address and every reset and sign-in request of the user, at once.
   * `events` are appended only when the address was set.
   */
  apply(request: UpdateRequestRecord, nowSeconds: number, events: EventDraft[]): Promise<EmailUpdateOutcome>;
}

const counted: CountedRequests = { table: requests, key: requests.id };
const live = (id: string, nowSeconds: number) => and(eq(requests.id, id), isLive(requests.expiresAt, nowSeconds));
const otherHolderOf = (db: Pick<Db, 'select'>, email: string, userId: string) =>
  db.select({ id: users.id }).from(users).where(and(eq(users.email, email), ne(users.id, userId))).get();

export function sqliteEmailUpdateStore(db: Db, append: AppendEvents): EmailUpdateStore {
  return {
    heldByOther: async (email, userId) => otherHolderOf(db, email, userId) !== undefined,
    ...sqliteRequestRows(db, requests),
    deleteLive: async (id, nowSeconds) => db.delete(requests).where(live(id, nowSeconds)).returning({ id: requests.id }).get() !== undefined,
    recordWrongCode: async (id, nowSeconds, events) => recordWrongCode(db, counted, id, nowSeconds, (tx) => append(tx, events)),
    async apply(request, nowSeconds, events) {
      return db.transaction((tx) => {
        const claimed = tx.delete(requests).where(live(request.id, nowSeconds)).returning({ id: requests.id }).get();
        if (claimed === undefined) return 'gone';
        if (otherHolderOf(tx, request.email, request.userId)) return 'taken';
        tx.update(users).set({ email: request.email, emailVerified: true }).where(eq(users.id, request.userId)).run();
        tx.delete(requests).where(eq(requests.email, request.email)).run();
        tx.delete(passwordResetRequests).where(eq(passwordResetRequests.userId, request.userId)).run();
        tx.delete(emailSignInRequests).where(eq(emailSignInRequests.userId, request.userId)).run();
        append(tx, events);
        return 'updated';
      });
    },
  };
}
