import { Elysia } from 'elysia';
import type { Deps } from '../deps';
import { addressKey, type LimitResult } from '../security/rate-limit';
import type { UserRow } from '../db/schema';
import { AppError, notFound, tooManyRequests } from './errors';

export function enforce(result: LimitResult): void {
  if (!result.ok) throw tooManyRequests(result.retryAfterSeconds);
}

/** Every endpoint that takes client_ip spends one token of that address's bucket (API.md §5). */
export function spendAddressToken(deps: Deps, clientIp: string | null): void {
  if (clientIp !== null) enforce(deps.limits.address.consume(addressKey(clientIp)));
}

export async function assertStrongPassword(deps: Deps, password: string): Promise<void> {
  if (await deps.breach.isBreached(password)) throw new AppError(400, 'WEAK_PASSWORD');
}

/**
 * Loads the user named by `:id` in Elysia's transform phase, which runs before body validation,
 * so an unknown user is 404 even when the body is also wrong (API.md §1, order of checks).
 */
export function pathUser(findRow: (id: string) => UserRow | undefined) {
  return new Elysia({ name: 'path-user' }).derive({ as: 'scoped' }, ({ params }) => {
    const id = (params as Record<string, string | undefined>).id;
    const user = id === undefined ? undefined : findRow(id);
    if (user === undefined) throw notFound();
    return { user };
  });
}
