import { COMMON_HEADERS } from './headers';

/**
 * The one error type for expected failures. The field is `errorCode`, not `code`:
 * Elysia's onError reads `error.code` and would mistake ours for its own.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(errorCode);
    this.name = 'AppError';
  }
}

export const notFound = () => new AppError(404, 'NOT_FOUND');
export const invalidData = () => new AppError(400, 'INVALID_DATA');
export const invalidRequest = () => new AppError(400, 'INVALID_REQUEST');
export const incorrectCode = () => new AppError(400, 'INCORRECT_CODE');
export const notAllowed = () => new AppError(400, 'NOT_ALLOWED');
export const emailAlreadyUsed = () => new AppError(400, 'EMAIL_ALREADY_USED');
export const tooManyRequests = (retryAfterSeconds: number) =>
  new AppError(400, 'TOO_MANY_REQUESTS', Math.max(1, Math.ceil(retryAfterSeconds)));

export function errorResponse(status: number, errorCode: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: errorCode }), {
    status,
    headers: { 'content-type': 'application/json', ...COMMON_HEADERS, ...headers },
  });
}
