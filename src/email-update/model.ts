import { t } from 'elysia';
import { Email, OneTimeCode, unixSeconds } from '../http/fields';
import type { UpdateRequestRecord } from './store';

export const TAG = 'Email update';

const Id = t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] });

export const EmailUpdateRequest = t.Object({
  id: Id,
  user_id: Id,
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
  email: t.String({ description: 'The new address, lower-cased', examples: ['ada@example.com'] }),
  code: t.String({ description: '8 characters; send it to the address to be verified', examples: ['7KQ2MZXD'] }),
});
export type UpdateRequestView = typeof EmailUpdateRequest.static;

export const CreateEmailUpdateBody = t.Object({ email: Email });
export const VerifyNewEmailBody = t.Object({
  request_id: t.String({ description: 'The email update request id', examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  code: OneTimeCode,
});
export const NewEmail = t.Object({ email: t.String({ examples: ['ada@example.com'] }) });
export type NewEmailView = typeof NewEmail.static;

export const toUpdateView = (record: UpdateRequestRecord): UpdateRequestView => ({
  id: record.id,
  user_id: record.userId,
  created_at: record.createdAt,
  expires_at: record.expiresAt,
  email: record.email,
  code: record.code,
});
