import type { Static } from 'elysia';
import type { Deps } from '../deps';
import { isForeignKeyViolation } from '../db/constraints';
import { newRequestTimes } from '../db/request-lifetime';
import { incorrectCode, invalidRequest, notFound } from '../http/errors';
import { assertStrongPassword, enforce, spendAddressToken } from '../http/guards';
import { nowSeconds } from '../security/clock';
import { constantTimeEqual, generateId, generateOneTimeCode, normalizeCode, sha256Hex } from '../security/random';
import type { PasswordResetRequestRow } from '../db/schema';
import { type CreatedPasswordResetRequest, toResetRequestView } from './model';
import type { ResetRequestQueries } from './repository';

/** Codes are case-insensitive, so the hash is of the upper-cased form. */
const hashCode = (code: string): string => sha256Hex(normalizeCode(code));

export function createResetRequest(
  deps: Deps,
  requests: ResetRequestQueries,
  userId: string,
  clientIp: string | null,
): Static<typeof CreatedPasswordResetRequest> {
  spendAddressToken(deps, clientIp);
  enforce(deps.limits.resetRequests.hit(userId));
  const code = generateOneTimeCode();
  const row = { id: generateId(), userId, ...newRequestTimes(nowSeconds(deps.clock)), codeHash: hashCode(code) };
  try {
    requests.insert(row);
  } catch (error) {
    if (isForeignKeyViolation(error)) throw notFound(); // the user was deleted after the path check
    throw error;
  }
  return { ...toResetRequestView(row), code };
}

/** Every wrong code counts, also once the request is verified; the 5th invalidates it (API.md §9). */
export function verifyResetEmail(
  deps: Deps,
  requests: ResetRequestQueries,
  request: PasswordResetRequestRow,
  input: { code: string; clientIp: string | null },
): void {
  spendAddressToken(deps, input.clientIp);
  const now = nowSeconds(deps.clock);
  if (constantTimeEqual(hashCode(input.code), request.codeHash)) {
    if (!requests.markVerified(request.id, now)) throw notFound();
    return;
  }
  if (requests.recordFailedAttempt(request.id, now) === 'gone') throw notFound();
  throw incorrectCode();
}

/**
 * Works on an open or a verified request (seed-spec, States). The slow hash happens before the
 * transaction; the transaction then re-checks that the request is still live.
 */
export async function resetPassword(
  deps: Deps,
  requests: ResetRequestQueries,
  input: { requestId: string; password: string; clientIp: string | null },
): Promise<void> {
  if (requests.findLive(input.requestId, nowSeconds(deps.clock)) === undefined) throw invalidRequest();
  spendAddressToken(deps, input.clientIp);
  await assertStrongPassword(deps, input.password);
  const passwordHash = await deps.hasher.hash(input.password);
  if (!requests.redeem(input.requestId, nowSeconds(deps.clock), passwordHash)) throw invalidRequest();
}
