import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { FormatRegistry } from 'elysia/type-system';
import { isValidEmail, MAX_EMAIL_CODE_POINTS } from '../security/email-address';

/**
 * JSON Schema keywords the OpenAPI document states for a field but TypeBox must not check: its
 * minLength/maxLength count UTF-16 units where JSON Schema counts code points, and its patterns have
 * no `u` flag. The runtime check is a `gatehouse-*` format; the docs plugin replaces that format with
 * these keywords, so the document says the real rule.
 */
export const DOCUMENTED_AS = 'x-documented-as';

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
// JSON Schema's maxLength counts code points and TypeBox's UTF-16 units: a fresh fuzz seed found 600
// emoji refused as INVALID_DATA while the document accepted them. Longer is INVALID_DATA; a string
// within it that is no known format is UNSUPPORTED_PASSWORD_HASH.
FormatRegistry.Set('gatehouse-password-hash', (value: string) => codePointLength(value) <= MAX_PASSWORD_HASH_CODE_POINTS);

/**
 * Refuses lone surrogates (Unicode Cs): JSON's \uD800 escapes can name them, but they are not text.
 * JSON Schema validators read patterns with the `u` flag, where a lone surrogate is one Cs code point.
 */
const WELL_FORMED = String.raw`^\P{Cs}*$`;

export const passwordField = (description = 'A password') =>
  t.String({
    format: 'gatehouse-password',
    [DOCUMENTED_AS]: { minLength: 8, maxLength: 127, pattern: WELL_FORMED },
    description: `${description}: 8 to 127 characters (Unicode code points, no lone surrogates), hashed exactly as given`,
    examples: ['correct horse battery staple'],
  });
export const Password = passwordField();

/** Free text of at most 64 code points (ids the server looks up), for the same reason as password_hash. */
FormatRegistry.Set('gatehouse-text-64', (value: string) => codePointLength(value) <= 64);
export const text64 = (options: { description: string; examples?: string[] }) =>
  t.String({ format: 'gatehouse-text-64', [DOCUMENTED_AS]: { maxLength: 64 }, ...options });

const MAX_PASSWORD_HASH_CODE_POINTS = 1024;
export const passwordHashField = (description: string, examples: string[]) =>
  t.String({ format: 'gatehouse-password-hash', [DOCUMENTED_AS]: { maxLength: MAX_PASSWORD_HASH_CODE_POINTS }, description, examples });

/**
 * Anything but controls, format characters, separators, whitespace, lone surrogates, `@` and
 * `,;<>()[]\\"`, nor U+037E (NFC turns it into `;`); the domain part also no `.`.
 */
const EMAIL_CHAR = String.raw`[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{White_Space},;<>()\[\]\\"@\u037E]`;
const DOMAIN_LABEL = String.raw`[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{White_Space},;<>()\[\]\\"@.\u037E]+`;
export const Email = t.String({
  format: 'gatehouse-email',
  [DOCUMENTED_AS]: { maxLength: MAX_EMAIL_CODE_POINTS, pattern: `^${EMAIL_CHAR}+@${DOMAIN_LABEL}(\\.${DOMAIN_LABEL})+$` },
  description:
    'An email address: fewer than 256 characters (Unicode code points); exactly one @ with a non-empty part before it; after it, ' +
    'at least two non-empty labels separated by dots; no whitespace, no control or format characters (Unicode Cc, Cf, Zl, Zp) ' +
    'and none of , ; < > ( ) [ ] \\ ". The same must hold after NFC normalisation and lower-casing, the form in which it is stored and compared.',
  examples: ['ada@example.com'],
});

/** `""` and `null` mean absent (API.md §1). */
const CLIENT_IP_DESCRIPTION =
  'The end user\'s address, at most 64 characters (Unicode code points); when present the call spends a token of that ' +
  'address\'s rate limit. "" and null mean absent. IPv6 addresses share limits per /64, except those that embed an IPv4 address.';
export const ClientIp = t.Optional(
  t.Union([t.String({ format: 'gatehouse-client-ip', [DOCUMENTED_AS]: { maxLength: 64, pattern: WELL_FORMED }, description: CLIENT_IP_DESCRIPTION }), t.Null()], {
    description: CLIENT_IP_DESCRIPTION,
    examples: ['203.0.113.7'],
  }),
);

/** Where the address is what the call is about (API.md §14, clear-address-limits): required, not empty. */
export const RequiredClientIp = t.String({
  format: 'gatehouse-client-ip',
  minLength: 1,
  [DOCUMENTED_AS]: { minLength: 1, maxLength: 64, pattern: WELL_FORMED },
  description: 'An address as client_ip names it elsewhere: 1 to 64 characters (Unicode code points); IPv6 addresses by their /64, except those that embed an IPv4 address',
  examples: ['203.0.113.7'],
});

export const presentClientIp = (value: string | null | undefined): string | null =>
  value === undefined || value === null || value === '' ? null : value;

const CODE_CHARS = 'A-HJ-NP-Za-hj-np-z2-9';
export const OneTimeCode = t.String({
  pattern: `^[${CODE_CHARS}]{8}$`,
  minLength: 8,
  maxLength: 8,
  description: '8 characters of ABCDEFGHJKLMNPQRSTUVWXYZ23456789, case-insensitive',
  examples: ['7KQ2MZXD'],
});
export const RecoveryCode = t.String({
  pattern: `^[${CODE_CHARS}]{16}$`,
  minLength: 16,
  maxLength: 16,
  description: '16 characters of ABCDEFGHJKLMNPQRSTUVWXYZ23456789, case-insensitive',
  examples: ['7KQ2MZXDH3PA9WEN'],
});
export const TotpCode = t.String({ pattern: '^[0-9]{6}$', minLength: 6, maxLength: 6, description: '6 digits', examples: ['492039'] });

/**
 * TypeBox's plain integer: Elysia's t.Integer is a string-or-number transform, which makes every
 * response run TypeBox's interpreted encoder (and tells OpenAPI the field might be a string).
 */
export const unixSeconds = (description = 'Unix seconds') => Type.Integer({ description, examples: [1795310920] });
