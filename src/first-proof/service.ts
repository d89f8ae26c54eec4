import { draft, type EventDraft } from '../events/model';
import type { PasswordHasher } from '../hashing/password-hash';
import { generateSecret } from '../security/random';

/**
 * API.md §15, "the first proof of an address revokes what nobody proved": anyone can create a user
 * with somebody else's address and give it a password, TOTP and passkeys before its owner ever
 * proves the mailbox. What replaces them is hashed here, before the transaction that verifies the
 * address (no hash inside a transaction); the store applies it only if the address is still unproven then.
 */
export interface Revocation {
  /** The hash of a recovery code nobody is ever shown. */
  recoveryCodeHash: string;
  /** The hash of a password nobody knows (an email sign-in); null when the step sets its own (a reset). */
  passwordHash: string | null;
  events: EventDraft[];
}

/**
 * What replaces the unproven credentials: one argon2id hash of a 200-bit secret that is discarded at
 * once, kept for the process's life. No typed password or recovery code can match it (a check against
 * it costs what any check costs, so a revoked account is told apart by nothing but the answer), and
 * sharing it between users reveals nothing, since nobody knows what it hashes. Hashed once, on first
 * need, so parallel first proofs of an address cost no hash beyond their own.
 */
export function createRevocations(hasher: PasswordHasher) {
  let unknowable: Promise<string> | undefined;
  const unknowableHash = () => {
    const hashing = (unknowable ??= hasher.hash(generateSecret()));
    // A refusal (a full hashing queue) is not kept: the next first proof tries again.
    hashing.catch(() => unknowable === hashing && (unknowable = undefined));
    return hashing;
  };
  return {
    async prepare(input: { userId: string; time: number; clientIp: string | null; replacePassword: boolean }): Promise<Revocation> {
      const hash = await unknowableHash();
      return {
        recoveryCodeHash: hash,
        passwordHash: input.replacePassword ? hash : null,
        events: [draft('credentials.revoked', input.time, input.userId, input.clientIp)],
      };
    },
  };
}

/** Whether a step that proves the mailbox turns this user's address from unproven to verified. */
export const isFirstProof = (user: { email: string | null; emailVerified: boolean }): boolean => user.email !== null && !user.emailVerified;
