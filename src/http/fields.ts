import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { FormatRegistry } from 'elysia/type-system';
import { isValidEmail } from '../security/email';

/** Code points, not UTF-16 units: TypeBox's minLength/maxLength would count an emoji twice. */
const codePointLength = (value: string): number => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};

/**
 * A lone surrogate is not a character: it cannot be encoded, so hashing or storing it would silently
 * turn it into U+FFFD and make different inputs equal. Such strings are INVALID_DATA everywhere.
 */
const isValidPassword = (value: string): boolean => {
  const n = codePointLength(value);
  return value.isWellFormed() && n >= 8 && n <= 127;
};

const isValidClientIp = (value: string): boolean => value.isWellFormed() && codePointLength(value) <= 64;

FormatRegistry.Set('gatehouse-password', isValidPassword);
FormatRegistry.Set('gatehouse-email', isValidEmail);
FormatRegistry.Set('gatehouse-client-ip', isValidClientIp);

export const passwordField = (description = 'A password') =>
  t.String({
    format: 'gatehouse-password',
    description: `${description}: 8 to 127 characters (Unicode code points)`,
    examples: ['correct horse battery staple'],
  });
export const Password = passwordField();

export const Email = t.String({
  format: 'gatehouse-email',
  description: 'Fewer than 256 characters, contains @ and a . after the last @, no surrounding whitespace',
  examples: ['ada@example.com'],
});

/** `""` and `null` mean absent (API.md §1). */
export const ClientIp = t.Optional(
  t.Union([t.String({ format: 'gatehouse-client-ip', description: 'At most 64 characters' }), t.Null()], {
    description: 'The end user\'s address; when present the call spends a token of that address\'s rate limit',
    examples: ['203.0.113.7'],
  }),
);

export const presentClientIp = (value: string | null | undefined): string | null =>
  value === undefined || value === null || value === '' ? null : value;

const CODE_CHARS = 'A-HJ-NP-Za-hj-np-z2-9';
export const OneTimeCode = t.String({
  pattern: `^[${CODE_CHARS}]{8}$`,
  description: '8 characters of ABCDEFGHJKLMNPQRSTUVWXYZ23456789, case-insensitive',
  examples: ['7KQ2MZXD'],
});
export const RecoveryCode = t.String({
  pattern: `^[${CODE_CHARS}]{16}$`,
  description: '16 characters of ABCDEFGHJKLMNPQRSTUVWXYZ23456789, case-insensitive',
  examples: ['7KQ2MZXDH3PA9WEN'],
});
export const TotpCode = t.String({ pattern: '^[0-9]{6}$', description: '6 digits', examples: ['492039'] });

/**
 * TypeBox's plain integer: Elysia's t.Integer is a string-or-number transform, which makes every
 * response run TypeBox's interpreted encoder (and tells OpenAPI the field might be a string).
 */
export const unixSeconds = (description = 'Unix seconds') => Type.Integer({ description, examples: [1795310920] });
