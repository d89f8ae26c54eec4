import { describe, expect, test } from 'bun:test';
import { encodeTotpKey, generateTotpCode, matchingStep, parseTotpKey, timeStep } from '../src/security/totp';

/** RFC 6238 Appendix B, SHA-1 column: the key is the ASCII string "12345678901234567890". */
const RFC_KEY = new TextEncoder().encode('12345678901234567890');
const VECTORS: [seconds: number, code: string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('RFC 6238 SHA-1 test vectors', () => {
  for (const [seconds, code] of VECTORS) {
    const ms = seconds * 1000;

    test(`T = ${seconds}: the 8-digit code verifies for its own step`, () => {
      expect(generateTotpCode(RFC_KEY, ms, 8)).toBe(code);
      expect(matchingStep(RFC_KEY, code, ms, 8)).toBe(Math.floor(seconds / 30));
    });

    test(`T = ${seconds}: the 6-digit code is the last 6 digits and verifies`, () => {
      const sixDigits = code.slice(2);
      expect(generateTotpCode(RFC_KEY, ms)).toBe(sixDigits);
      expect(matchingStep(RFC_KEY, sixDigits, ms)).toBe(timeStep(ms));
    });
  }

  test('a code is accepted one step early or late but not two', () => {
    const ms = 1111111111 * 1000;
    const code = generateTotpCode(RFC_KEY, ms);
    expect(matchingStep(RFC_KEY, code, ms - 30_000)).toBe(timeStep(ms));
    expect(matchingStep(RFC_KEY, code, ms + 30_000)).toBe(timeStep(ms));
    expect(matchingStep(RFC_KEY, code, ms - 60_000)).toBeUndefined();
    expect(matchingStep(RFC_KEY, code, ms + 60_000)).toBeUndefined();
  });

  test('a wrong code or a code of the wrong length matches nothing', () => {
    const ms = 59_000;
    expect(matchingStep(RFC_KEY, '000000', ms)).toBeUndefined();
    expect(matchingStep(RFC_KEY, '94287082', ms)).toBeUndefined();
  });
});

describe('TOTP key parsing', () => {
  const key = new Uint8Array(20).map((_, i) => (i * 37 + 251) % 256);
  const standard = encodeTotpKey(key);

  test('standard padded base64 of 20 bytes round-trips', () => {
    expect(standard).toHaveLength(28);
    expect(standard).toMatch(/[+/]/); // the fixture exercises the characters URL-safe base64 replaces
    expect(parseTotpKey(standard)).toEqual(key);
    expect(parseTotpKey(encodeTotpKey(RFC_KEY))).toEqual(RFC_KEY);
  });

  test('URL-safe, unpadded, wrong lengths, non-canonical bits and non-strings are refused', () => {
    const refused: unknown[] = [
      standard.replaceAll('+', '-').replaceAll('/', '_'),
      standard.replace(/=+$/, ''),
      encodeTotpKey(key.slice(0, 19)),
      encodeTotpKey(new Uint8Array(21)),
      `${standard.slice(0, 26)}B=`, // low bits of the last character set
      ` ${standard}`,
      'not base64 at all!!!!!!!!!!=',
      '',
      12345,
      null,
      undefined,
    ];
    for (const value of refused) expect(parseTotpKey(value)).toBeUndefined();
  });
});
