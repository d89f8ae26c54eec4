import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as authenticator apps implement it: HMAC-SHA-1, 30-second steps. */
const ALGORITHM = 'SHA1';
const PERIOD_SECONDS = 30;
const TOTP_DIGITS = 6;
/** Steps on either side of the current one that are still accepted, for clock drift. */
const WINDOW = 1;
const KEY_BYTES = 20;

/**
 * Decodes a key given as standard padded base64 of exactly 20 bytes, else undefined.
 * Re-encoding and comparing rejects what Buffer would silently accept: URL-safe letters,
 * missing padding, whitespace and non-zero trailing bits.
 */
export function parseTotpKey(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'string') return undefined;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== KEY_BYTES || bytes.toString('base64') !== value) return undefined;
  return new Uint8Array(bytes);
}

export const encodeTotpKey = (key: Uint8Array): string => Buffer.from(key).toString('base64');

export const timeStep = (timestampMs: number): number => TOTP.counter({ period: PERIOD_SECONDS, timestamp: timestampMs });

export function generateTotpCode(key: Uint8Array, timestampMs: number, digits = TOTP_DIGITS): string {
  return TOTP.generate({ secret: secretOf(key), algorithm: ALGORITHM, digits, period: PERIOD_SECONDS, timestamp: timestampMs });
}

/** The time step the code belongs to, if it is the code of a step within ±1 of now; otpauth compares in constant time. */
export function matchingStep(key: Uint8Array, code: string, nowMs: number, digits = TOTP_DIGITS): number | undefined {
  const delta = TOTP.validate({
    token: code,
    secret: secretOf(key),
    algorithm: ALGORITHM,
    digits,
    period: PERIOD_SECONDS,
    timestamp: nowMs,
    window: WINDOW,
  });
  return delta === null ? undefined : timeStep(nowMs) + delta;
}

const secretOf = (key: Uint8Array): Secret => new Secret({ buffer: key.slice().buffer });
