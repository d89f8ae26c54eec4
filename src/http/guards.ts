import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { addressKey } from '../security/address-key';
import type { FailureLockout, LimitResult } from '../security/rate-limit';
import type { UserRow } from '../db/schema';
import { AppError, incorrectCode, notFound, tooManyRequests } from './errors';

export function enforce(result: LimitResult): void {
  if (!result.ok) throw tooManyRequests(result.retryAfterSeconds);
}

/** A wrong code counts toward the user's lockout of that endpoint (API.md §5); the caller clears it on a right one (§9). */
export function rejectWrongCode(lockout: FailureLockout, userId: string): never {
  lockout.recordFailure(userId);
  throw incorrectCode();
}

/** Every endpoint that takes client_ip spends one token of that address's bucket (API.md §5). */
export function spendAddressToken(deps: Deps, clientIp: string | null): void {
  if (clientIp !== null) enforce(deps.limits.address.consume(addressKey(clientIp)));
}

export async function assertStrongPassword(deps: Deps, password: string): Promise<void> {
  if (await deps.breach.isBreached(password)) throw new AppError(400, 'WEAK_PASSWORD');
}

/**
 * Loads the resource named by `:id` in Elysia's transform phase, which runs before body validation,
 * so an unknown (or expired) one is 404 even when the body is also wrong (API.md §1, order of checks).
 */
export function pathResource<Name extends string, Row>(name: Name, find: (id: string) => Row | undefined) {
  return new Elysia().derive({ as: 'scoped' }, ({ params }) => {
    const id = (params as Record<string, string | undefined>).id;
    const found = id === undefined ? undefined : find(id);
    if (found === undefined) throw notFound();
    return { [name]: found } as Record<Name, Row>;
  });
}

export const pathUser = (findRow: (id: string) => UserRow | undefined) => pathResource('user', findRow);
