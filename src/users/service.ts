import { eq } from 'drizzle-orm';
import type { Deps } from '../deps';
import { users } from '../db/schema';
import { AppError } from '../http/errors';
import { toUnixSeconds } from '../security/clock';
import { generateId, generateRecoveryCode } from '../security/random';
import type { UserView } from './repository';

export const emailAlreadyUsed = () => new AppError(400, 'EMAIL_ALREADY_USED');

export const isUniqueViolation = (error: unknown): boolean =>
  error instanceof Error && /UNIQUE constraint failed/.test(error.message);

/** Both hashes are computed before the insert; the unique index settles a race for the same email. */
export async function createUser(
  deps: Deps,
  input: { password: string; email: string | null },
): Promise<UserView & { recovery_code: string }> {
  const recoveryCode = generateRecoveryCode();
  const [passwordHash, recoveryCodeHash] = await Promise.all([
    deps.hasher.hash(input.password),
    deps.hasher.hash(recoveryCode),
  ]);
  const row = {
    id: generateId(),
    createdAt: toUnixSeconds(deps.clock()),
    email: input.email,
    emailVerified: false,
    passwordHash,
    recoveryCodeHash,
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
    recovery_code: recoveryCode,
  };
}

/** Foreign keys cascade, so requests and the TOTP credential go with the user. */
export function deleteUser(deps: Deps, id: string): void {
  deps.db.delete(users).where(eq(users.id, id)).run();
}
