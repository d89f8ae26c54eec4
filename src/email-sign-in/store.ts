import { and, eq } from 'drizzle-orm';
import { isLive, recordWrongCode, sqliteRequestRows, type CountedRequests, type WrongCodeOutcome } from '../code-requests/store';
import type { Db } from '../db/client';
import { emailSignInRequests as requests, users } from '../db/schema';
import type { EventDraft } from '../events/model';
import type { AppendEvents } from '../events/store';
import { isFirstProof, type Revocation } from '../first-proof/service';
import { revokeUnproven } from '../first-proof/store';
import type { DisabledState } from '../users/model';

export interface SignInRequestRecord {
  id: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  failedAttempts: number;
  /** The address the code was sent to (normalised): the code proves that one, and no other. */
  email: string;
  /** SHA-256 of the upper-cased code; the code itself is never stored. */
  codeHash: string;
}

/**
 * `signed_in`: consumed, the address marked verified, the events appended. `gone`: consumed, expired
 * or invalidated meanwhile, or the user's address is no longer the one the code was sent to (the
 * request is then deleted). `refused`: the user's state refuses it; nothing changed. `unproven`: the
 * address was never verified and no revocation was given (API.md §15); nothing changed.
 */
export type RedeemOutcome = 'signed_in' | 'gone' | 'refused' | 'unproven';

/** The service's rule on the user's state (a disabled user: API.md §14), applied inside the redemption. */
export type RefusesUser = (user: DisabledState) => boolean;

/** Each method is one atomic unit (API.md §1, Atomicity). */
export interface EmailSignInStore {
  /** False when the user no longer exists. */
  insert(record: SignInRequestRecord): Promise<boolean>;
  findLive(id: string, nowSeconds: number): Promise<SignInRequestRecord | undefined>;
  /** Oldest first, ties by id. */
  listLive(userId: string, nowSeconds: number): Promise<SignInRequestRecord[]>;
  deleteAllOf(userId: string): Promise<void>;
  /** The request's own counter, and the wrong code's events (only if it was counted); the 5th wrong code deletes it. */
  recordWrongCode(id: string, nowSeconds: number, events: EventDraft[]): Promise<WrongCodeOutcome>;
  /**
   * Consumes the request and marks the user's address verified, at once, unless `refuses` the user as
   * it is then: of parallel redemptions exactly one finds the request. `events` are appended only when
   * it was consumed. An address verified for the first time also applies `revocation` (API.md §15).
   */
  redeem(request: SignInRequestRecord, nowSeconds: number, events: EventDraft[], refuses: RefusesUser, revocation?: Revocation): Promise<RedeemOutcome>;
}

const counted: CountedRequests = { table: requests, key: requests.id };
const live = (id: string, nowSeconds: number) => and(eq(requests.id, id), isLive(requests.expiresAt, nowSeconds));
const ownerColumns = { email: users.email, emailVerified: users.emailVerified, disabled: users.disabled, disabledUntil: users.disabledUntil };

export function sqliteEmailSignInStore(db: Db, append: AppendEvents): EmailSignInStore {
  return {
    ...sqliteRequestRows(db, requests),
    recordWrongCode: async (id, nowSeconds, events) =>
      recordWrongCode(db, counted, id, nowSeconds, (tx, outcome) => (outcome === 'gone' ? undefined : append(tx, events))),
    async redeem(request, nowSeconds, events, refuses, revocation) {
      return db.transaction((tx) => {
        const user = tx.select(ownerColumns).from(users).where(eq(users.id, request.userId)).get();
        if (user === undefined) return 'gone';
        if (user.email !== request.email) {
          tx.delete(requests).where(eq(requests.id, request.id)).run();
          return 'gone';
        }
        if (refuses(user)) return 'refused';
        const firstProof = isFirstProof(user);
        if (firstProof && revocation === undefined) return 'unproven';
        const claimed = tx.delete(requests).where(live(request.id, nowSeconds)).returning({ id: requests.id }).get();
        if (claimed === undefined) return 'gone';
        tx.update(users).set({ emailVerified: true }).where(eq(users.id, request.userId)).run();
        append(tx, events);
        if (firstProof) revokeUnproven(tx, append, request.userId, revocation!);
        return 'signed_in';
      });
    },
  };
}
