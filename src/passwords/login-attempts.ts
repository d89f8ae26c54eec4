import type { Deps } from '../deps';
import { tooManyRequests } from '../http/errors';
import type { LimitResult } from '../security/rate-limit';
import type { KeyedSerializer } from '../security/keyed-serializer';
import { addressKey } from '../security/address-key';

/**
 * The address bucket and the login block, in that order, then `check`. Checks from one address run
 * one at a time: the slow hash sits between reading the block and counting a failure, and parallel
 * guesses must not all pass the block before the first failure is counted.
 */
export function runPasswordCheck<T>(
  deps: Deps,
  perAddress: KeyedSerializer,
  clientIp: string | null,
  check: () => Promise<T>,
): Promise<T> {
  if (clientIp === null) return check();
  const key = addressKey(clientIp);
  return perAddress.run(key, () => {
    const token = deps.limits.address.consume(key);
    const block = deps.limits.loginBlock.check(key);
    if (!token.ok || !block.ok) throw tooManyRequests(longestWait(token, block));
    return check();
  });
}

/** Retry-After names the wait until every limit that refuses now would pass (API.md §2): the longest. */
const longestWait = (...results: LimitResult[]): number =>
  Math.max(...results.map((result) => (result.ok ? 0 : result.retryAfterSeconds)));

/** Only incorrect passwords count, and a success does not clear the count (API.md §9). */
export function recordIncorrectPassword(deps: Deps, clientIp: string | null): void {
  if (clientIp !== null) deps.limits.loginBlock.recordFailure(addressKey(clientIp));
}
