import { sql } from 'drizzle-orm';
import { users } from './schema';

/**
 * The value a flow that proves the user reads their mail sets `email_verified` to: true when the
 * user has an address, and false (unchanged) when the email is null, since the flag says that a
 * stored address was verified. One expression, so it reads the row the same statement updates.
 */
export const hasEmail = sql<boolean>`${users.email} is not null`;
