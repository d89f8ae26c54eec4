import { t } from 'elysia';
import { ClientIp, DOCUMENTED_AS, Email, Password, unixSeconds } from '../http/models';

export const User = t.Object({
  id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  email: t.Union([t.String({ examples: ['ada@example.com'] }), t.Null()]),
  email_verified: t.Boolean(),
  registered_totp: t.Boolean(),
});

export const CreatedUser = t.Composite([
  User,
  t.Object({ recovery_code: t.String({ description: 'Shown once; store it with the user', examples: ['7KQ2MZXDH3PA9WEN'] }) }),
]);

export const CreateUserBody = t.Object({
  password: Password,
  email: t.Optional(t.Union([Email, t.Null()])),
  client_ip: ClientIp,
});

/**
 * Unknown, not String: a repeated or odd parameter must fall back to its default, never fail
 * validation. The document still states each parameter's type and values.
 */
const fallingBack = (documented: Record<string, unknown>, description: string, example: string | number) =>
  t.Optional(t.Unknown({ [DOCUMENTED_AS]: documented, description: `${description}. Any other value falls back to the default`, examples: [example] }));

export const ListUsersQuery = t.Object({
  sort_by: fallingBack({ type: 'string', enum: ['created_at', 'id'], default: 'created_at' }, 'Sort key, case-sensitive', 'created_at'),
  sort_order: fallingBack({ type: 'string', enum: ['ascending', 'descending'], default: 'ascending' }, 'Sort direction, case-sensitive', 'ascending'),
  per_page: fallingBack({ type: 'integer', minimum: 1, maximum: 1000, default: 20 }, 'Users per page, digits only; larger values are capped at 1000', 20),
  page: fallingBack({ type: 'integer', minimum: 1, default: 1 }, 'Page number, digits only; a page past the end is empty', 1),
  email_query: fallingBack(
    { type: 'string' },
    'Case-insensitive substring of the email address (compared after NFC normalisation and lower-casing); empty means no filter',
    'example.com',
  ),
});
