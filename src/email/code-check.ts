import type { Deps } from '../deps';
import { nowSeconds } from '../security/clock';
import type { FailureLockout } from '../security/rate-limit';
import { enforce, rejectWrongCode } from '../http/guards';
import { codeMatches, recordWrongCode, type AttemptCountedRows } from '../security/code-attempts';

export interface EmailCodeAttempt {
  userId: string;
  /** The per-user lockout of this endpoint. */
  lockout: FailureLockout;
  given: string;
  issued: string;
  /** Where the request's wrong-code counter lives, and the request's key there. */
  rows: AttemptCountedRows;
  requestKey: string;
}

/**
 * The user's email-code lockout, then the code. A wrong code counts on the request row (the 5th
 * deletes it) and toward the lockout; a correct one clears the lockout. Synchronous from reading
 * the request to counting, so parallel requests cannot interleave in between.
 */
export function assertEmailCode(deps: Deps, attempt: EmailCodeAttempt): void {
  const { lockout } = attempt;
  enforce(lockout.check(attempt.userId));
  if (codeMatches(attempt.given, attempt.issued)) {
    lockout.reset(attempt.userId);
    return;
  }
  recordWrongCode(deps.db, attempt.rows, attempt.requestKey, nowSeconds(deps.clock));
  rejectWrongCode(lockout, attempt.userId);
}
