import { and, eq, sql } from 'drizzle-orm';
import { isLivePg, postgresRequestRows, recordWrongCodePg, type CountedPgRequests } from '../code-requests/store.pg';
import type { PgDb } from '../db/pg-client';
import { inTransaction, lockOwner } from '../db/pg-transaction';
import { passwordResetRequests as resets, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import { isFirstProof } from '../first-proof/service';
import { revokeUnprovenPg } from '../first-proof/store.pg';
import type { PasswordResetStore, ResetOutcome } from './store';

/** A flow that proves the user reads their mail marks a stored address verified; with no address the flag stays false. */
const hasEmail = sql<boolean>`${users.email} is not null`;

const ownerColumns = { email: users.email, emailVerified: users.emailVerified, disabled: users.disabled, disabledUntil: users.disabledUntil };
const counted: CountedPgRequests = { table: resets, key: resets.id };
const live = (nowSeconds: number) => isLivePg(resets.expiresAt, nowSeconds);

export function postgresPasswordResetStore(db: PgDb, append: AppendEventsPg): PasswordResetStore {
  return {
    ...postgresRequestRows(db, resets),
    delete: async (id) => (await db.delete(resets).where(eq(resets.id, id)).returning({ id: resets.id })).length > 0,
    async markVerified(id, nowSeconds) {
      const rows = await db.update(resets).set({ emailVerified: true }).where(and(eq(resets.id, id), live(nowSeconds))).returning({ id: resets.id });
      return rows.length > 0;
    },
    recordWrongCode: (id, nowSeconds) => recordWrongCodePg(db, counted, id, nowSeconds),
    /**
     * Locks the request's user first (the lock order): parallel redemptions of this or another of the
     * user's requests wait there, and so does a disable, whose state is then read under the lock; the
     * DELETE … RETURNING then claims the row, and a twin finds nothing.
     */
    redeem: (id, nowSeconds, passwordHash, events, refuses, revocation) =>
      inTransaction(db, async (tx): Promise<ResetOutcome> => {
        const userId = await lockOwner(tx, resets.userId, resets.id, id);
        if (userId === undefined) return 'gone';
        const [user] = await tx.select(ownerColumns).from(users).where(eq(users.id, userId));
        if (user === undefined) return 'gone';
        if (refuses(user)) return 'refused';
        const firstProof = isFirstProof(user);
        if (firstProof && revocation === undefined) return 'unproven';
        const [request] = await tx.delete(resets).where(and(eq(resets.id, id), live(nowSeconds))).returning({ userId: resets.userId });
        if (request === undefined) return 'gone';
        await tx.update(users).set({ passwordHash, emailVerified: hasEmail }).where(eq(users.id, request.userId));
        await tx.delete(resets).where(eq(resets.userId, request.userId));
        await append(tx, events);
        if (firstProof) await revokeUnprovenPg(tx, append, request.userId, revocation!);
        return 'reset';
      }),
  };
}
