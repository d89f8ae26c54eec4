import { and, eq } from 'drizzle-orm';
import type { PgTx } from '../db/pg-client';
import { apiKeys, challenges, emailUpdateRequests, passkeys, totpCredentials, users } from '../db/pg-schema';
import type { AppendEventsPg } from '../events/store.pg';
import type { Revocation } from './service';

/** revokeUnproven (store.ts) on PostgreSQL; the caller holds the user's row lock (the lock order). */
export async function revokeUnprovenPg(tx: PgTx, append: AppendEventsPg, userId: string, revocation: Revocation): Promise<void> {
  await tx.delete(passkeys).where(eq(passkeys.userId, userId));
  await tx.delete(challenges).where(and(eq(challenges.userId, userId), eq(challenges.ceremony, 'registration')));
  await tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId));
  await tx.delete(emailUpdateRequests).where(eq(emailUpdateRequests.userId, userId));
  await tx.delete(apiKeys).where(eq(apiKeys.userId, userId));
  const replaced = revocation.passwordHash === null ? {} : { passwordHash: revocation.passwordHash };
  await tx.update(users).set({ recoveryCodeHash: revocation.recoveryCodeHash, ...replaced }).where(eq(users.id, userId));
  await append(tx, revocation.events);
}
