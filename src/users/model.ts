import { t } from 'elysia';
import { ClientIp, Email, Password, unixSeconds } from '../http/models';

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

/** Unknown, not String: a repeated or odd parameter must fall back to its default, never fail validation. */
export const ListUsersQuery = t.Object({
  sort_by: t.Optional(t.Unknown({ description: '`created_at` (default) or `id`', examples: ['created_at'] })),
  sort_order: t.Optional(t.Unknown({ description: '`ascending` (default) or `descending`', examples: ['ascending'] })),
  per_page: t.Optional(t.Unknown({ description: 'Digits ≥ 1, default 20, capped at 1000', examples: ['20'] })),
  page: t.Optional(t.Unknown({ description: 'Digits ≥ 1, default 1', examples: ['1'] })),
  email_query: t.Optional(t.Unknown({ description: 'Case-insensitive substring of the email address', examples: ['example.com'] })),
});
