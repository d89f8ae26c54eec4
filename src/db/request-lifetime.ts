import { gt } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';

/** Password reset, email verification and email update requests all live 10 minutes (API.md §3). */
const REQUEST_LIFETIME_SECONDS = 10 * 60;

export const newRequestTimes = (now: number) => ({ createdAt: now, expiresAt: now + REQUEST_LIFETIME_SECONDS });

/** From its `expires_at` second on, a request behaves as if it did not exist (the sweep deletes it later). */
export const isLive = (expiresAt: SQLiteColumn, now: number) => gt(expiresAt, now);
