/** Emails are stored and compared in one form (API.md §1), so lookups and the unique index agree. */
export const normalizeEmail = (email: string): string => email.toLowerCase();

const codePointLength = (value: string): number => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};

/**
 * The one email rule (API.md §1, §9), shared by the HTTP fields and `gatehouse import`. A lone
 * surrogate is not a character, so a string holding one is refused like any malformed address.
 */
export function isValidEmail(value: string): boolean {
  if (!value.isWellFormed() || codePointLength(value) >= 256 || value.trim() !== value) return false;
  const at = value.lastIndexOf('@');
  return at >= 0 && value.slice(at + 1).includes('.');
}
