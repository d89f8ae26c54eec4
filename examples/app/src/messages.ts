/**
 * What a person reads for each Gatehouse error code. Sign-in failures share one message so the page
 * does not tell which addresses have accounts.
 */
const MESSAGES: Record<string, string> = {
  INVALID_DATA: 'Please check what you typed: an email address, and a password of 8 to 127 characters.',
  WEAK_PASSWORD: 'That password appears in known data breaches. Please choose another one.',
  EMAIL_ALREADY_USED: 'An account with that email address already exists.',
  TOO_MANY_REQUESTS: 'Too many attempts. Please wait a little and try again.',
  INCORRECT_PASSWORD: 'Wrong email address or password.',
  NOT_FOUND: 'Wrong email address or password.',
  INCORRECT_CODE: 'That code is not right. Please check it and try again.',
  INVALID_REQUEST: 'That code has expired or was already used. Please ask for a new one.',
  NOT_ALLOWED: 'That is not possible for this account right now.',
  CONFIRM_EMAIL_FIRST: 'Please confirm your email address first: until then, nothing can be added to this account.',
  // The pages for an emailed code say the same whether the code was wrong or there was none to match.
  CODE_NOT_ACCEPTED: 'That code is not right, or it is no longer valid. Please check it, or ask for a new one.',
  USER_DISABLED: 'This account is disabled. Please contact support.',
  PASSKEY_VERIFICATION_FAILED: 'The passkey could not be verified.',
  PASSKEY_ALREADY_REGISTERED: 'That passkey is already registered.',
};

export function messageFor(error: { code: string; retryAfter?: number }): string {
  const message = MESSAGES[error.code] ?? 'Something went wrong. Please try again.';
  return error.retryAfter === undefined ? message : `${message} (about ${error.retryAfter} s)`;
}

/** Wrong code, no such request (an unknown address), used up: one answer, so none tells who has an account. */
const CODE_FAILURES = new Set(['INCORRECT_CODE', 'INVALID_REQUEST', 'NOT_FOUND']);

/** The message on a page where an emailed code was typed. */
export const codeMessage = (error: { code: string; retryAfter?: number }) => messageFor(CODE_FAILURES.has(error.code) ? { code: 'CODE_NOT_ACCEPTED' } : error);
