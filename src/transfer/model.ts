import { importedPassword, passwordFields } from '../password-migration/model';
import { isValidEmail, normalizeEmail } from '../security/email-address';
import { GENERIC_PASSKEY_NAME, isPasskeyName } from '../passkeys/webauthn/names';
import { parsePasswordHash } from '../hashing/formats';
import { parseTotpKey } from '../security/totp';
import type { PasskeyRecord } from '../passkeys/store';
import { apiKeyJson, readTransferApiKeys, type TransferApiKey } from '../api-keys/model';
import type { UserRecord } from '../users/store';
import { isCredentialId, isKnownTransport, isSupportedPublicKey, MAX_PASSKEYS_PER_USER, TRANSPORT_NAMES } from '../passkeys/webauthn/fields';

/** A passkey as export writes it and import reads it: every stored field but its user (API.md §13). */
export type TransferPasskey = Omit<PasskeyRecord, 'userId'>;

/** One user as `gatehouse export` writes it and `gatehouse import` reads it (API.md §11), as stored. */
export interface TransferUser extends UserRecord {
  totpKey: string | null;
  totpLastStep: number | null;
  /** Each oldest first, ties by id. */
  passkeys: TransferPasskey[]; apiKeys: TransferApiKey[];
}

/** A line that passed every check it can pass alone; uniqueness is checked against the others later. */
export interface StagedUser extends TransferUser { line: number }

/** A value that must be unique across the file and the database: `id`, `email`, `passkeys[2].credential_id`. */
export type UniqueField = 'id' | 'email' | `passkeys[${number}].${'id' | 'credential_id'}` | `api_keys[${number}].id`;

/** Why a line is not imported. */
export type LineProblem =
  | { line: number; kind: 'invalid'; field: string | null; detail: string }
  | { line: number; kind: 'repeats'; field: UniqueField; firstLine: number }
  | { line: number; kind: 'taken'; field: UniqueField };

const json = JSON.stringify;
const passkeyJson = (p: TransferPasskey): string =>
  `{"id":${json(p.id)},"credential_id":${json(p.credentialId)},"public_key":${json(p.publicKey)},"counter":${p.counter},` +
  `"transports":${json(p.transports)},"backed_up":${p.backedUp},"name":${json(p.name)},"created_at":${p.createdAt},"last_used_at":${json(p.lastUsedAt)}}`;

/** Keys in a fixed order, so two exports of the same users are the same bytes. */
export function toNdjsonLine(user: TransferUser): string {
  return (
    `{"id":${json(user.id)},"created_at":${user.createdAt},"email":${json(user.email)},"email_verified":${user.emailVerified},"disabled":${user.disabled},"disabled_until":${json(user.disabledUntil)},` +
    `${passwordFields(user.passwordHash)},"recovery_code_hash":${json(user.recoveryCodeHash)},` +
    `"totp_key":${json(user.totpKey)},"totp_last_step":${json(user.totpLastStep)},"passkeys":[${user.passkeys.map(passkeyJson).join(',')}],` +
    `"api_keys":[${user.apiKeys.map(apiKeyJson).join(',')}]}`
  );
}

/** What holds a taken value, by field (a passkey's index left out). */
const TAKEN: Record<string, string> = {
  email: 'EMAIL_ALREADY_USED, held by an existing user',
  id: 'an existing user has this id',
  'passkeys[].credential_id': 'PASSKEY_ALREADY_REGISTERED, held by an existing passkey',
  'passkeys[].id': 'an existing passkey has this id',
  'api_keys[].id': 'an existing API key has this id',
};

export function describeProblem(problem: LineProblem): string {
  const where = `line ${problem.line}${problem.field === null ? '' : `: ${problem.field}`}`;
  if (problem.kind === 'invalid') return `${where}: ${problem.detail}`;
  if (problem.kind === 'repeats') return `${where}: already on line ${problem.firstLine}`;
  return `${where}: ${TAKEN[problem.field.replace(/\[\d+\]/, '[]')]}`;
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
  constructor(readonly field: string | null, readonly detail: string) {
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

function integerField(record: Record<string, unknown>, key: string, max: number, at = ''): number | null {
  const value = record[key];
  if (!present(value)) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw new Invalid(at + key, `must be a whole number from 0 to ${max}`);
  return value;
}

/** A user's or a passkey's id, or null when the line leaves it out. */
function idField(value: unknown, field: string): string | null {
  if (!present(value)) return null;
  if (typeof value !== 'string' || !ID_PATTERN.test(value)) throw new Invalid(field, 'must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit');
  return value;
}

const MAX_SIGN_COUNT = 2 ** 32 - 1;
function readPasskey(value: unknown, at: string, defaults: LineDefaults): TransferPasskey {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Invalid(at, 'must be an object');
  const record = value as Record<string, unknown>;
  const { id, credential_id: credentialId, public_key: publicKey, transports, backed_up: backedUp, name } = record;
  const passkeyId = idField(id, `${at}.id`);
  if (typeof credentialId !== 'string' || !isCredentialId(credentialId)) throw new Invalid(`${at}.credential_id`, 'must be base64url (no padding) of 1 to 1023 bytes');
  if (typeof publicKey !== 'string' || !isSupportedPublicKey(publicKey)) throw new Invalid(`${at}.public_key`, 'must be base64url of a COSE public key (ES256, EdDSA or RS256)');
  const counter = integerField(record, 'counter', MAX_SIGN_COUNT, `${at}.`);
  const known = !present(transports) || (Array.isArray(transports) && transports.every(isKnownTransport) && new Set(transports).size === transports.length);
  if (!known) throw new Invalid(`${at}.transports`, `must be a list of distinct values among ${TRANSPORT_NAMES.join(', ')}`);
  if (present(backedUp) && typeof backedUp !== 'boolean') throw new Invalid(`${at}.backed_up`, 'must be true or false');
  if (present(name) && (typeof name !== 'string' || !isPasskeyName(name))) throw new Invalid(`${at}.name`, 'must be 1 to 64 characters, no control characters');
  const createdAt = integerField(record, 'created_at', MAX_CREATED_AT, `${at}.`);
  return {
    id: passkeyId ?? defaults.newId(),
    credentialId,
    publicKey,
    counter: counter ?? 0,
    transports: (transports as string[] | null | undefined) ?? [],
    backedUp: backedUp === true,
    name: (name as string | null | undefined) ?? GENERIC_PASSKEY_NAME,
    createdAt: createdAt ?? defaults.now,
    lastUsedAt: integerField(record, 'last_used_at', MAX_CREATED_AT, `${at}.`),
  };
}

/** At most 10 a user, as the API allows; ids and credential ids unique within the line (across lines: staging). */
function readPasskeys(value: unknown, defaults: LineDefaults): TransferPasskey[] {
  if (!present(value)) return [];
  if (!Array.isArray(value)) throw new Invalid('passkeys', 'must be a list of passkeys, or null');
  if (value.length > MAX_PASSKEYS_PER_USER) throw new Invalid('passkeys', `at most ${MAX_PASSKEYS_PER_USER} passkeys a user`);
  const passkeys = value.map((item, i) => readPasskey(item, `passkeys[${i}]`, defaults));
  passkeys.forEach((passkey, i) => {
    for (const key of ['id', 'credentialId'] as const) {
      const first = passkeys.findIndex((other) => other[key] === passkey[key]);
      if (first < i) throw new Invalid(`passkeys[${i}].${key === 'id' ? 'id' : 'credential_id'}`, `already in passkeys[${first}]`);
    }
  });
  return passkeys;
}

function readUser(record: Record<string, unknown>, line: number, defaults: LineDefaults): StagedUser {
  const { id, email, email_verified: emailVerified, totp_key: totpKey, disabled } = record;
  const userId = idField(id, 'id');
  const createdAt = integerField(record, 'created_at', MAX_CREATED_AT);
  if (present(email) && (typeof email !== 'string' || !isValidEmail(email))) throw new Invalid('email', 'INVALID_DATA, not a valid email address');
  if (present(emailVerified) && typeof emailVerified !== 'boolean') throw new Invalid('email_verified', 'must be true or false');
  const passwordHash = importedPassword(record, () => hashField(record, 'password_hash'));
  if (typeof passwordHash !== 'string') throw new Invalid(passwordHash.field, passwordHash.detail);
  const recoveryCodeHash = hashField(record, 'recovery_code_hash');
  if (present(totpKey) && parseTotpKey(totpKey) === undefined) {
    throw new Invalid('totp_key', 'must be standard padded base64 of 20 bytes, or null');
  }
  if (present(disabled) && typeof disabled !== 'boolean') throw new Invalid('disabled', 'must be true or false');
  const disabledUntil = integerField(record, 'disabled_until', MAX_CREATED_AT);
  if (disabledUntil !== null && disabled !== true) throw new Invalid('disabled_until', 'needs disabled: true'); // API.md §14
  const totpLastStep = integerField(record, 'totp_last_step', Number.MAX_SAFE_INTEGER);
  if (totpLastStep !== null && !present(totpKey)) throw new Invalid('totp_last_step', 'needs a totp_key');
  return {
    line,
    id: userId ?? defaults.newId(),
    createdAt: createdAt ?? defaults.now,
    email: present(email) ? normalizeEmail(email as string) : null,
    emailVerified: emailVerified === true,
    ...{ disabled: disabled === true, disabledUntil },
    passwordHash,
    recoveryCodeHash: recoveryCodeHash ?? defaults.newRecoveryCodeHash(),
    totpKey: present(totpKey) ? (totpKey as string) : null,
    // Zero: no code accepted yet, so any current code works once.
    totpLastStep: present(totpKey) ? (totpLastStep ?? 0) : null,
    passkeys: readPasskeys(record.passkeys, defaults),
    apiKeys: readTransferApiKeys(record.api_keys, defaults.now, (field, detail) => { throw new Invalid(field, detail); }),
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

/** Stored passkeys as JSON text, oldest first: `transports` comma-separated, `backedUp` however the database writes booleans. */
export type PasskeyJson = Omit<TransferPasskey, 'transports' | 'backedUp'> & { transports: string; backedUp: boolean | number };
export const toTransferPasskeys = (text: string | null): TransferPasskey[] =>
  text === null ? [] : (JSON.parse(text) as PasskeyJson[]).map((p) => ({ ...p, transports: p.transports === '' ? [] : p.transports.split(','), backedUp: p.backedUp === true || p.backedUp === 1 }));

/** A stored problem: the columns a kind of problem lacks are null. */
export type ProblemRow = { line: number; kind: LineProblem['kind']; field: UniqueField; detail: string | null; firstLine: number | null };
export const toProblem = ({ detail, firstLine, ...problem }: ProblemRow) =>
  ({ ...problem, ...(detail === null ? {} : { detail }), ...(firstLine === null ? {} : { firstLine: Number(firstLine) }), line: Number(problem.line) }) as LineProblem;
