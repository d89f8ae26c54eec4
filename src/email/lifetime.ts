import type { Deps } from '../deps';
import { toUnixSeconds } from '../security/clock';

/** Email verification and email update requests live 10 minutes (API.md §3). */
export const REQUEST_LIFETIME_SECONDS = 10 * 60;

export const nowSeconds = (deps: Deps): number => toUnixSeconds(deps.clock());

/** A request is live while `expires_at > now`; an expired one behaves as if it did not exist. */
export const newRequestTimes = (now: number) => ({ createdAt: now, expiresAt: now + REQUEST_LIFETIME_SECONDS });
