import { ERROR_STATUS, type ErrorCode } from '../errors';
import { COMMON_HEADERS } from './headers';

export function errorResponse(errorCode: ErrorCode, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: errorCode }), {
    status: ERROR_STATUS[errorCode],
    headers: { 'content-type': 'application/json', ...COMMON_HEADERS, ...headers },
  });
}

export const noContent = (): Response => new Response(null, { status: 204, headers: COMMON_HEADERS });
