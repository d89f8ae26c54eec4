/**
 * Every error code of the API (seed-spec, API.md §2, §10, §11, §13, §14, §17, §18) with its status: the one table the error
 * hook answers from and the OpenAPI error lists are derived from.
 */
export const ERROR_STATUS = {
  INVALID_DATA: 400,
  WEAK_PASSWORD: 400,
  TOO_MANY_REQUESTS: 400,
  INCORRECT_CODE: 400,
  INCORRECT_PASSWORD: 400,
  INVALID_REQUEST: 400,
  EMAIL_ALREADY_USED: 400,
  NOT_ALLOWED: 400,
  PASSKEY_VERIFICATION_FAILED: 400,
  PASSKEY_ALREADY_REGISTERED: 400,
  UNSUPPORTED_PASSWORD_HASH: 400,
  USER_DISABLED: 400,
  INVALID_API_KEY: 400,
  API_KEY_EXPIRED: 400,
  INSUFFICIENT_SCOPE: 400,
  NOT_AUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  UNKNOWN_ERROR: 500,
  SERVER_BUSY: 503,
  UNAVAILABLE: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type for expected failures, thrown from any layer. The field is `errorCode`, not
 * `code`: Elysia's onError reads `error.code` and would mistake ours for its own.
 */
export class AppError extends Error {
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly errorCode: ErrorCode,
    retryAfterSeconds?: number,
  ) {
    super(errorCode);
    this.name = 'AppError';
    this.status = ERROR_STATUS[errorCode];
    this.retryAfterSeconds = retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(retryAfterSeconds));
  }
}
