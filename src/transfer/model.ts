import { isValidEmail, normalizeEmail } from '../security/email-address';
import { parsePasswordHash } from '../security/password-formats';
import { parseTotpKey } from '../security/totp';
import type { UserRecord } from '../users/store';

/** One user as `gatehouse export` writes it and `gatehouse import` reads it (API.md §11), as stored. */
export interface TransferUser extends UserRecord {
  totpKey: string | null;
  totpLastStep: number | null;
}

/** A line that passed every check it can pass alone; uniqueness is checked against the others later. */
export interface StagedUser extends TransferUser {
  line: number;
}

export type UniqueField = 'id' | 'email';

/** Why a line is not imported. */
export type LineProblem =
  | { line: number; kind: 'invalid'; field: string | null; detail: string }
  | { line: number; kind: 'repeats'; field: UniqueField; firstLine: number }
  | { line: number; kind: 'taken'; field: UniqueField };

/** Keys in a fixed order, so two exports of the same users are the same bytes. */
export function toNdjsonLine(user: TransferUser): string {
  const json = JSON.stringify;
  return (
    `{"id":${json(user.id)},"created_at":${user.createdAt},"email":${json(user.email)},"email_verified":${user.emailVerified},` +
    `"password_hash":${json(user.passwordHash)},"recovery_code_hash":${json(user.recoveryCodeHash)},` +
    `"totp_key":${json(user.totpKey)},"totp_last_step":${json(user.totpLastStep)}}`
  );
}

export function describeProblem(problem: LineProblem): string {
  const where = `line ${problem.line}${problem.field === null ? '' : `: ${problem.field}`}`;
  switch (problem.kind) {
    case 'invalid':
      return `${where}: ${problem.detail}`;
    case 'repeats':
      return `${where}: already on line ${problem.firstLine}`;
    case 'taken':
      return `${where}: ${problem.field === 'email' ? 'EMAIL_ALREADY_USED, held by an existing user' : 'an existing user has this id'}`;
  }
}

/**
 * Imported ids keep the old system's id when the application stores it (`auth0|…`, a Firebase uid,
 * a UUID, a number): letters, digits and `._~:@|+-`, starting with a letter or digit, so the id
 * stays one path segment (`/users/{id}`). Gatehouse's own ids are 24 of these characters.
 */
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._~:@|+-]{0,63}$/;
/** 9999-12-31T23:59:59Z. */
const MAX_CREATED_AT = 253_402_300_799;

export interface LineDefaults {
  /** Unix seconds for a missing `created_at`. */
  now: number;
  newId: () => string;
  /** Stands for a new recovery code that is never shown (see service). */
  newRecoveryCodeHash: () => string;
}

class Invalid extends Error {
  constructor(
    readonly field: string | null,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** JSON null and a missing key are the same: absent. */
const present = (value: unknown): boolean => value !== undefined && value !== null;

function hashField(record: Record<string, unknown>, field: 'password_hash' | 'recovery_code_hash'): string | null {
  const value = record[field];
  if (!present(value)) return null;
  if (typeof value !== 'string') throw new Invalid(field, 'must be a string');
  if (parsePasswordHash(value) === undefined) throw new Invalid(field, 'UNSUPPORTED_PASSWORD_HASH, in no accepted format');
  return value;
}

function integerField(record: Record<string, unknown>, field: string, max: number): number | null {
  const value = record[field];
  if (!present(value)) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new Invalid(field, `must be a whole number from 0 to ${max}`);
  }
  return value;
}

function readUser(record: Record<string, unknown>, line: number, defaults: LineDefaults): StagedUser {
  const { id, email, email_verified: emailVerified, totp_key: totpKey } = record;
  if (present(id) && (typeof id !== 'string' || !ID_PATTERN.test(id))) {
    throw new Invalid('id', 'must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit');
  }
  const createdAt = integerField(record, 'created_at', MAX_CREATED_AT);
  if (present(email) && (typeof email !== 'string' || !isValidEmail(email))) throw new Invalid('email', 'INVALID_DATA, not a valid email address');
  if (present(emailVerified) && typeof emailVerified !== 'boolean') throw new Invalid('email_verified', 'must be true or false');
  const passwordHash = hashField(record, 'password_hash');
  if (passwordHash === null) throw new Invalid('password_hash', 'required');
  const recoveryCodeHash = hashField(record, 'recovery_code_hash');
  if (present(totpKey) && parseTotpKey(totpKey) === undefined) {
    throw new Invalid('totp_key', 'must be standard padded base64 of 20 bytes, or null');
  }
  const totpLastStep = integerField(record, 'totp_last_step', Number.MAX_SAFE_INTEGER);
  if (totpLastStep !== null && !present(totpKey)) throw new Invalid('totp_last_step', 'needs a totp_key');
  return {
    line,
    id: (id as string | null | undefined) ?? defaults.newId(),
    createdAt: createdAt ?? defaults.now,
    email: present(email) ? normalizeEmail(email as string) : null,
    emailVerified: emailVerified === true,
    passwordHash,
    recoveryCodeHash: recoveryCodeHash ?? defaults.newRecoveryCodeHash(),
    totpKey: present(totpKey) ? (totpKey as string) : null,
    // Zero: no code accepted yet, so any current code works once.
    totpLastStep: present(totpKey) ? (totpLastStep ?? 0) : null,
  };
}

/** Checks one line like the API checks a body (API.md §11); unknown keys are ignored, as in the API. */
export function parseImportLine(text: string, line: number, defaults: LineDefaults): StagedUser | LineProblem {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return { line, kind: 'invalid', field: null, detail: 'not valid JSON' };
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return { line, kind: 'invalid', field: null, detail: 'not a JSON object' };
  }
  try {
    return readUser(record as Record<string, unknown>, line, defaults);
  } catch (error) {
    if (!(error instanceof Invalid)) throw error;
    return { line, kind: 'invalid', field: error.field, detail: error.detail };
  }
}

export const isProblem = (parsed: StagedUser | LineProblem): parsed is LineProblem => 'kind' in parsed;
