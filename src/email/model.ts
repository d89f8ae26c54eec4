import { t } from 'elysia';
import type { EmailUpdateRequestRow, EmailVerificationRequestRow } from '../db/schema';
import { Email, OneTimeCode, unixSeconds } from '../http/models';

const Id = t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] });
const IssuedCode = t.String({ description: '8 characters; send it to the address to be verified', examples: ['7KQ2MZXD'] });

export const EmailVerificationRequest = t.Object({
  user_id: Id,
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
  code: IssuedCode,
});

export const EmailUpdateRequest = t.Object({
  id: Id,
  user_id: Id,
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
  email: t.String({ description: 'The new address, lower-cased', examples: ['ada@example.com'] }),
  code: IssuedCode,
});

export const VerifyEmailBody = t.Object({ code: OneTimeCode });
export const CreateEmailUpdateBody = t.Object({ email: Email });
export const VerifyNewEmailBody = t.Object({
  request_id: t.String({ description: 'The email update request id', examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  code: OneTimeCode,
});
export const NewEmail = t.Object({ email: t.String({ examples: ['ada@example.com'] }) });

export const toVerificationView = (row: EmailVerificationRequestRow) => ({
  user_id: row.userId,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
  code: row.code,
});

export const toUpdateView = (row: EmailUpdateRequestRow) => ({
  id: row.id,
  user_id: row.userId,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
  email: row.email,
  code: row.code,
});
