import { t } from 'elysia';
import { OneTimeCode, unixSeconds } from '../http/fields';
import type { VerificationRecord } from './store';

export const TAG = 'Email verification';

export const EmailVerificationRequest = t.Object({
  user_id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
  code: t.String({ description: '8 characters; send it to the address to be verified', examples: ['7KQ2MZXD'] }),
});
export type VerificationView = typeof EmailVerificationRequest.static;

export const VerifyEmailBody = t.Object({ code: OneTimeCode });

export const toVerificationView = (record: VerificationRecord): VerificationView => ({
  user_id: record.userId,
  created_at: record.createdAt,
  expires_at: record.expiresAt,
  code: record.code,
});
