import { t } from 'elysia';
import { ClientIp, Email, OneTimeCode, unixSeconds } from '../http/fields';
import type { SignInRequestRecord } from './store';

export const TAG = 'Email sign-in';

const Id = t.String({ examples: ['k3m9x7gq2d4a8rfe3hn5pjc6'] });

/** A sign-in request as listed: never its code (API.md §15). */
export const EmailSignInRequest = t.Object({
  id: Id,
  user_id: t.String({ examples: ['x7gq2m9kd4a8rfe3hn5pjc6w'] }),
  created_at: unixSeconds(),
  expires_at: unixSeconds('Unix seconds, 10 minutes after created_at'),
});

export const CreatedEmailSignInRequest = t.Composite([
  EmailSignInRequest,
  t.Object({
    email: t.String({
      description: 'The stored address (normalised) the code must be emailed to; never the address as typed',
      examples: ['ada@example.com'],
    }),
    code: t.String({
      description: "The code to email to the user's address. Shown only here, stored only as a hash",
      examples: ['7KQ2MZXD'],
    }),
  }),
]);

export type SignInRequestView = typeof EmailSignInRequest.static;
export type CreatedSignInRequestView = typeof CreatedEmailSignInRequest.static;

export const toSignInRequestView = (row: Pick<SignInRequestRecord, 'id' | 'userId' | 'createdAt' | 'expiresAt'>): SignInRequestView => ({
  id: row.id,
  user_id: row.userId,
  created_at: row.createdAt,
  expires_at: row.expiresAt,
});

export const CreateSignInRequestBody = t.Object({ email: Email, client_ip: ClientIp });
export const AuthenticateWithCodeBody = t.Object({
  request_id: t.String({ description: 'The id of a live email sign-in request', examples: ['k3m9x7gq2d4a8rfe3hn5pjc6'] }),
  code: OneTimeCode,
  client_ip: ClientIp,
});
