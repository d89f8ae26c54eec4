import { and, eq } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { apiKeys, challenges, emailUpdateRequests, passkeys, totpCredentials, users } from '../db/schema';
import type { AppendEvents } from '../events/store';
import type { Revocation } from './service';

/**
 * Inside the transaction that turns the user's address verified for the first time (API.md §15):
 * every passkey, pending passkey registration, the TOTP credential, API keys and pending email changes go, the
 * recovery code (and for an email sign-in the password) is replaced, and `credentials.revoked` is written.
 */
export function revokeUnproven(tx: Tx, append: AppendEvents, userId: string, revocation: Revocation): void {
  tx.delete(passkeys).where(eq(passkeys.userId, userId)).run();
  tx.delete(challenges).where(and(eq(challenges.userId, userId), eq(challenges.ceremony, 'registration'))).run();
  tx.delete(totpCredentials).where(eq(totpCredentials.userId, userId)).run();
  tx.delete(emailUpdateRequests).where(eq(emailUpdateRequests.userId, userId)).run();
  tx.delete(apiKeys).where(eq(apiKeys.userId, userId)).run();
  const replaced = revocation.passwordHash === null ? {} : { passwordHash: revocation.passwordHash };
  tx.update(users).set({ recoveryCodeHash: revocation.recoveryCodeHash, ...replaced }).where(eq(users.id, userId)).run();
  append(tx, revocation.events);
}
