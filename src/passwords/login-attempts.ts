import type { Deps } from '../deps';
import { enforce, spendAddressToken } from '../http/guards';
import { addressKey } from '../security/rate-limit';

/** The address bucket and the login block, in that order, for every endpoint that checks a password. */
export function admitPasswordCheck(deps: Deps, clientIp: string | null): void {
  spendAddressToken(deps, clientIp);
  if (clientIp !== null) enforce(deps.limits.loginBlock.check(addressKey(clientIp)));
}

/** Only incorrect passwords count, and a success does not clear the count (API.md §9). */
export function recordIncorrectPassword(deps: Deps, clientIp: string | null): void {
  if (clientIp !== null) deps.limits.loginBlock.recordFailure(addressKey(clientIp));
}
