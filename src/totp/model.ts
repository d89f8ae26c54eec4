import { t } from 'elysia';
import { DOCUMENTED_AS, TotpCode, unixSeconds } from '../http/fields';
import type { TotpRecord } from './store';

export const TAG = 'Two-factor';

const KEY_EXAMPLE = '0KHD8uS1lod4aVpLPC0eDxEiM0Q=';

/** 26 characters, then one that carries only 4 data bits (its low 2 bits zero), then the padding. */
const totpKeyField = (description: string) =>
  t.String({ pattern: '^[A-Za-z0-9+/]{26}[AEIMQUYcgkosw048]=$', minLength: 28, maxLength: 28, description, examples: [KEY_EXAMPLE] });

/**
 * key or its alias totp_key (API.md §4): the service refuses neither as INVALID_DATA. The document says
 * so as "without key, totp_key is required" (if/then), the same rule as anyOf of the two requireds;
 * type generators read anyOf as a union with `unknown`, which would leave the body untyped.
 */
export const RegisterTotpBody = t.Object(
  {
    key: t.Optional(totpKeyField('Standard base64 with padding (+/ and =) of exactly 20 bytes; required unless totp_key is sent')),
    totp_key: t.Optional(totpKeyField('Alias of key; key wins when both are sent')),
    code: TotpCode,
  },
  {
    // Each subschema names the property it requires, as linters expect of a `required`.
    [DOCUMENTED_AS]: { if: { not: { required: ['key'], properties: { key: true } } }, then: { required: ['totp_key'], properties: { totp_key: true } } },
    description: 'key (or its alias totp_key) and code.',
    examples: [{ key: KEY_EXAMPLE, code: '492039' }],
  },
);

export const VerifyTotpBody = t.Object({ code: TotpCode });

export const TotpCredential = t.Object({
  user_id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  key: t.String({ description: 'Standard padded base64 of the 20-byte key', examples: [KEY_EXAMPLE] }),
});
export type TotpCredentialView = typeof TotpCredential.static;

export const toTotpCredentialView = (record: TotpRecord): TotpCredentialView => ({
  user_id: record.userId,
  created_at: record.createdAt,
  key: record.key,
});
