import { createHash } from 'node:crypto';

/**
 * Opaque list cursors (API.md §20): base64url of a checksum and a JSON value. The checksum is not a
 * signature (a caller with the credential may list anything anyway, so a forged position gains
 * nothing); it turns a truncated, mistyped or hand-edited cursor into a refusal instead of a page
 * from somewhere else. Unkeyed, so every instance reads every other's cursors.
 */
const CHECKSUM_BYTES = 6;
/** A cursor holds a position and a filter: an email query can be 255 characters, ids 64. */
export const MAX_CURSOR_LENGTH = 1024;

const checksum = (json: Buffer) => createHash('sha256').update(json).digest().subarray(0, CHECKSUM_BYTES);

export function encodeCursor(value: unknown): string {
  const json = Buffer.from(JSON.stringify(value));
  return Buffer.concat([checksum(json), json]).toString('base64url');
}

/** The value, or undefined when the text is not a cursor this codec wrote (or was changed since). */
export function decodeCursor(text: string): unknown {
  if (text.length === 0 || text.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  // Only the canonical spelling: two texts never read as one cursor.
  if (bytes.toString('base64url') !== text || bytes.length <= CHECKSUM_BYTES) return undefined;
  const json = bytes.subarray(CHECKSUM_BYTES);
  if (!checksum(json).equals(bytes.subarray(0, CHECKSUM_BYTES))) return undefined;
  try {
    return JSON.parse(json.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** RFC 8288's `Link` value for the next page: `url` with `params` replacing its query. */
export function nextLink(url: string, params: Record<string, string>): string {
  const next = new URL(url);
  next.search = new URLSearchParams(params).toString();
  return `<${next.href}>; rel="next"`;
}
