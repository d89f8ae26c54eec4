import { and, asc, eq, ne } from 'drizzle-orm';
import type { Db } from '../db/client';
import { isLive, newRequestTimes } from '../db/request-lifetime';
import { emailUpdateRequests as requests, passwordResetRequests, users, type EmailUpdateRequestRow } from '../db/schema';
import type { AttemptCountedRows } from '../security/code-attempts';
import { generateId, generateOneTimeCode } from '../security/random';

export const updateCounter: AttemptCountedRows = { table: requests, key: requests.id };

const live = (id: string, now: number) => and(eq(requests.id, id), isLive(requests.expiresAt, now));

/** Another user's row holding this (lower-cased) address, if any. Also runs inside transactions. */
export const otherHolderOf = (db: Pick<Db, 'select'>, email: string, userId: string) =>
  db.select({ id: users.id }).from(users).where(and(eq(users.email, email), ne(users.id, userId))).get();

export function createUpdateRequest(db: Db, userId: string, email: string, now: number): EmailUpdateRequestRow {
  const row = { id: generateId(), userId, email, code: generateOneTimeCode(), ...newRequestTimes(now), failedAttempts: 0 };
  db.insert(requests).values(row).run();
  return row;
}

/** Oldest first, ties by id (API.md §9). */
export const liveUpdateRequestsOf = (db: Db, userId: string, now: number): EmailUpdateRequestRow[] =>
  db
    .select()
    .from(requests)
    .where(and(eq(requests.userId, userId), isLive(requests.expiresAt, now)))
    .orderBy(asc(requests.createdAt), asc(requests.id))
    .all();

export const deleteUpdateRequestsOf = (db: Db, userId: string): void => {
  db.delete(requests).where(eq(requests.userId, userId)).run();
};

export const findLiveUpdateRequest = (db: Db, id: string, now: number): EmailUpdateRequestRow | undefined =>
  db.select().from(requests).where(live(id, now)).get();

export const deleteLiveUpdateRequest = (db: Db, id: string, now: number): boolean =>
  db.delete(requests).where(live(id, now)).returning({ id: requests.id }).get() !== undefined;

export type EmailUpdateOutcome = 'updated' | 'gone' | 'taken';

/**
 * One transaction: claim (delete) the request so it is redeemed once; if another user took the
 * address meanwhile, stop there ('taken', the request stays invalidated); else set the address as
 * verified and invalidate every request for that address and every reset request of the user.
 */
export function applyEmailUpdate(db: Db, request: EmailUpdateRequestRow, now: number): EmailUpdateOutcome {
  return db.transaction((tx) => {
    const claimed = tx.delete(requests).where(live(request.id, now)).returning({ id: requests.id }).get();
    if (claimed === undefined) return 'gone';
    if (otherHolderOf(tx, request.email, request.userId)) return 'taken';
    tx.update(users).set({ email: request.email, emailVerified: true }).where(eq(users.id, request.userId)).run();
    tx.delete(requests).where(eq(requests.email, request.email)).run();
    tx.delete(passwordResetRequests).where(eq(passwordResetRequests.userId, request.userId)).run();
    return 'updated';
  });
}
