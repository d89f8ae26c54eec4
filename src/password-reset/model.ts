import { t } from 'elysia';
import { ClientIp, OneTimeCode, passwordField, unixSeconds } from '../http/fields';
import type { ResetRequestRecord } from './store';

export const TAG = 'Password reset';

export const PasswordResetRequest = t.Object({
  id: t.String({ examples: ['k3m9x7gq2d4a8rfe3hn5pjc6'] }),
  user_id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
});

export const CreatedPasswordResetRequest = t.Composite([
  PasswordResetRequest,
  t.Object({
    code: t.String({
      description: 'The email verification code; send it to the user. Shown only here, stored only as a hash',
      examples: ['7KQ2MZXD'],
    }),
  }),
]);

export type ResetRequestView = typeof PasswordResetRequest.static;
export type CreatedResetRequestView = typeof CreatedPasswordResetRequest.static;

export const toResetRequestView = (row: Pick<ResetRequestRecord, 'id' | 'userId' | 'createdAt' | 'expiresAt'>): ResetRequestView => ({
  id: row.id,
  user_id: row.userId,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
});

export const CreateResetRequestBody = t.Object({ client_ip: ClientIp });
export const VerifyResetEmailBody = t.Object({ code: OneTimeCode, client_ip: ClientIp });
export const ResetPasswordBody = t.Object({
  request_id: t.String({ description: 'The id of a live password reset request', examples: ['k3m9x7gq2d4a8rfe3hn5pjc6'] }),
  password: passwordField('The new password, strength-checked'),
  client_ip: ClientIp,
});
