import { ERROR_STATUS, type ErrorCode } from '../errors';

export function errorResponse(errorCode: ErrorCode, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: errorCode }), {
    status: ERROR_STATUS[errorCode],
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export const noContent = (): Response => new Response(null, { status: 204 });
