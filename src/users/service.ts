import { eq } from 'drizzle-orm';
import type { Deps } from '../deps';
import { isUniqueViolation } from '../db/constraints';
import { users } from '../db/schema';
import { emailAlreadyUsed } from '../http/errors';
import { nowSeconds } from '../security/clock';
import { generateId, generateRecoveryCode } from '../security/random';
import type { UserView } from './repository';

/** The code is shown once; only its argon2id hash is stored. */
export async function newRecoveryCode(deps: Deps): Promise<{ code: string; hash: string }> {
  const code = generateRecoveryCode();
  return { code, hash: await deps.hasher.hash(code) };
}

/** Both hashes are computed before the insert; the unique index settles a race for the same email. */
export async function createUser(
  deps: Deps,
  input: { password: string; email: string | null },
): Promise<UserView & { recovery_code: string }> {
  const [passwordHash, recoveryCode] = await Promise.all([deps.hasher.hash(input.password), newRecoveryCode(deps)]);
  const row = {
    id: generateId(),
    createdAt: nowSeconds(deps.clock),
    email: input.email,
    emailVerified: false,
    passwordHash,
    recoveryCodeHash: recoveryCode.hash,
  };
  try {
    deps.db.insert(users).values(row).run();
  } catch (error) {
    if (isUniqueViolation(error)) throw emailAlreadyUsed();
    throw error;
  }
  return {
    id: row.id,
    created_at: row.createdAt,
    email: row.email,
    email_verified: false,
    registered_totp: false,
    recovery_code: recoveryCode.code,
  };
}

/** Foreign keys cascade, so requests and the TOTP credential go with the user. */
export function deleteUser(deps: Deps, id: string): void {
  deps.db.delete(users).where(eq(users.id, id)).run();
}
