import { and, eq } from 'drizzle-orm';
import { hasEmail } from '../db/email-verified';
import type { Db } from '../db/client';
import { isLive, newRequestTimes } from '../db/request-lifetime';
import { emailVerificationRequests as requests, users, type EmailVerificationRequestRow } from '../db/schema';
import type { AttemptCountedRows } from '../security/code-attempts';
import { generateOneTimeCode } from '../security/random';

export const verificationCounter: AttemptCountedRows = { table: requests, key: requests.userId };

const liveFor = (userId: string, now: number) => and(eq(requests.userId, userId), isLive(requests.expiresAt, now));

export const findLiveVerification = (db: Db, userId: string, now: number): EmailVerificationRequestRow | undefined =>
  db.select().from(requests).where(liveFor(userId, now)).get();

/** One request per user: a new one replaces the old code, expiry and attempt count. */
export function replaceVerification(db: Db, userId: string, now: number): EmailVerificationRequestRow {
  const fresh = { ...newRequestTimes(now), code: generateOneTimeCode(), failedAttempts: 0 };
  return db
    .insert(requests)
    .values({ userId, ...fresh })
    .onConflictDoUpdate({ target: requests.userId, set: fresh })
    .returning()
    .get();
}

/** False when nothing live was there to delete. */
export const deleteLiveVerification = (db: Db, userId: string, now: number): boolean =>
  db.delete(requests).where(liveFor(userId, now)).returning({ userId: requests.userId }).get() !== undefined;

/**
 * Deletes the request (only the very one whose code was checked) and marks the email verified (when
 * the user has one), in one transaction. False when it was already redeemed, replaced or expired: a code works once.
 */
export function redeemVerification(db: Db, checked: EmailVerificationRequestRow, now: number): boolean {
  return db.transaction((tx) => {
    const claimed = tx
      .delete(requests)
      .where(and(liveFor(checked.userId, now), eq(requests.code, checked.code)))
      .returning({ userId: requests.userId })
      .get();
    if (claimed === undefined) return false;
    tx.update(users).set({ emailVerified: hasEmail }).where(eq(users.id, checked.userId)).run();
    return true;
  });
}
