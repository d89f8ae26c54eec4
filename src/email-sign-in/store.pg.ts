import { and, eq } from 'drizzle-orm';
import { isLivePg, postgresRequestRows, recordWrongCodePg, type CountedPgRequests } from '../code-requests/store.pg';
import type { PgDb } from '../db/pg-client';
import { inTransaction, lockUser } from '../db/pg-transaction';
import { emailSignInRequests as requests, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import { isFirstProof } from '../first-proof/service';
import { revokeUnprovenPg } from '../first-proof/store.pg';
import type { EmailSignInStore } from './store';

const counted: CountedPgRequests = { table: requests, key: requests.id };
const live = (id: string, nowSeconds: number) => and(eq(requests.id, id), isLivePg(requests.expiresAt, nowSeconds));
const ownerColumns = { email: users.email, emailVerified: users.emailVerified, disabled: users.disabled, disabledUntil: users.disabledUntil };

export function postgresEmailSignInStore(db: PgDb, append: AppendEventsPg): EmailSignInStore {
  return {
    ...postgresRequestRows(db, requests),
    recordWrongCode: (id, nowSeconds, events) =>
      recordWrongCodePg(db, counted, id, nowSeconds, async (tx, outcome) => (outcome === 'gone' ? undefined : append(tx, events))),
    /**
     * Locks the request's user first (the lock order), so a change of the user (a disable) commits
     * wholly before or after, and parallel redemptions wait there; the DELETE … RETURNING then claims the request,
     * and a twin finds nothing to delete.
     */
    redeem: (request, nowSeconds, events, refuses, revocation) =>
      inTransaction(db, async (tx) => {
        if (!(await lockUser(tx, request.userId))) return 'gone';
        const [user] = await tx.select(ownerColumns).from(users).where(eq(users.id, request.userId));
        if (user === undefined) return 'gone';
        if (user.email !== request.email) {
          await tx.delete(requests).where(eq(requests.id, request.id));
          return 'gone';
        }
        if (refuses(user)) return 'refused';
        const firstProof = isFirstProof(user);
        if (firstProof && revocation === undefined) return 'unproven';
        const claimed = await tx.delete(requests).where(live(request.id, nowSeconds)).returning({ id: requests.id });
        if (claimed.length === 0) return 'gone';
        await tx.update(users).set({ emailVerified: true }).where(eq(users.id, request.userId));
        await append(tx, events);
        if (firstProof) await revokeUnprovenPg(tx, append, request.userId, revocation!);
        return 'signed_in';
      }),
  };
}
