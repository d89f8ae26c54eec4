import { enforce } from '../http/guards';
import { AppError } from '../http/errors';
import type { FailureLockout } from '../security/rate-limit';

export const incorrectCode = () => new AppError(400, 'INCORRECT_CODE');

/** Second-factor attempts run under a per-user lockout (API.md §5): refused while it is locked. */
export const admitAttempt = (lockout: FailureLockout, userId: string): void => enforce(lockout.check(userId));

/** A wrong code counts toward the lockout. */
export function rejectWrongCode(lockout: FailureLockout, userId: string): never {
  lockout.recordFailure(userId);
  throw incorrectCode();
}

/** A right code clears the count (API.md §9). */
export const acceptRightCode = (lockout: FailureLockout, userId: string): void => lockout.reset(userId);
