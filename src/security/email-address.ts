/**
 * What makes an email address malformed (API.md §1 and §9). An application mails codes to these
 * addresses, so anything a mailer could read as a second recipient or a header (CR/LF, commas,
 * angle brackets, zero-width or other invisible characters) is refused outright.
 */
export const MAX_EMAIL_CODE_POINTS = 255;

/** Control, format and line/paragraph separator characters, whitespace, and the address punctuation. */
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{White_Space},;<>()[\]\\"]/u;

const codePoints = (value: string): number => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};

function isWellFormedAsGiven(value: string): boolean {
  if (!value.isWellFormed() || codePoints(value) > MAX_EMAIL_CODE_POINTS || FORBIDDEN.test(value)) return false;
  const parts = value.split('@');
  if (parts.length !== 2) return false;
  const [local = '', domain = ''] = parts;
  const labels = domain.split('.');
  return local !== '' && labels.length >= 2 && labels.every((label) => label !== '');
}

/**
 * The common case in one pass: printable ASCII outside the forbidden set, one `@`, a domain of two
 * or more non-empty labels. Lower-casing cannot break such an address, so it needs no second check;
 * an import checks a million of them.
 */
const PLAIN_ASCII = /^[!#-'*+\-./0-:=?A-Z^-~]+@[!#-'*+\-/0-:=?A-Z^-~]+(?:\.[!#-'*+\-/0-:=?A-Z^-~]+)+$/;
const isPlainAscii = (value: string): boolean => value.length <= MAX_EMAIL_CODE_POINTS && PLAIN_ASCII.test(value);

/** Emails are stored and compared in this form: NFC, then lower-cased (API.md §9). */
export const normalizeEmail = (value: string): string => value.normalize('NFC').toLowerCase();

/**
 * The rule holds for the address as given and as stored: normalising can change it (U+037E, the
 * Greek question mark, becomes a semicolon under NFC; 'İ' lower-cases to two code points).
 */
export const meetsEmailRule = (value: string): boolean => isWellFormedAsGiven(value) && isWellFormedAsGiven(normalizeEmail(value));

export const isValidEmail = (value: string): boolean => isPlainAscii(value) || meetsEmailRule(value);
