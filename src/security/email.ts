/** Emails are stored and compared in one form (API.md §1), so lookups and the unique index agree. */
export const normalizeEmail = (email: string): string => email.toLowerCase();
