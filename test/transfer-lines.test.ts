import { describe, expect, test } from 'bun:test';
import { isCurrentArgon2id, parsePasswordHash, verifyParsedHash } from '../src/hashing/formats';
import { describeProblem, isProblem, parseImportLine, toNdjsonLine, type LineProblem, type StagedUser } from '../src/transfer/model';
import { unguessableRecoveryCodeHash } from '../src/security/random';
import { VECTORS } from './password-formats.vectors';

const HASH = VECTORS.find((v) => v.scheme === 'bcrypt')!.hash;
const ARGON = VECTORS.find((v) => v.label === 'argon2id')!.hash;
const KEY = '0KHD8uS1lod4aVpLPC0eDxEiM0Q=';
const defaults = { now: 1_800_000_000, newId: () => 'generatedid', newRecoveryCodeHash: () => 'generated-recovery-hash' };

const parse = (value: unknown, line = 3) => parseImportLine(typeof value === 'string' ? value : JSON.stringify(value), line, defaults);
function problemOf(value: unknown): string {
  const parsed = parse(value);
  if (!isProblem(parsed)) throw new Error(`accepted: ${JSON.stringify(value)}`);
  return describeProblem(parsed);
}

describe('import lines', () => {
  test('only password_hash is required; the rest get defaults', () => {
    expect(parse({ password_hash: HASH })).toEqual({
      line: 3,
      id: 'generatedid',
      createdAt: 1_800_000_000,
      email: null,
      emailVerified: false,
      disabled: false,
      disabledUntil: null,
      passwordHash: HASH,
      recoveryCodeHash: 'generated-recovery-hash',
      totpKey: null,
      totpLastStep: null,
      passkeys: [],
      apiKeys: [],
    });
  });

  test('every field as export writes it; null is absent; unknown keys are ignored; the email is normalised', () => {
    const line = { id: 'auth0|5f7c8ec7c33c6c004bbafe82', created_at: 1, email: 'Ada@Example.COM', email_verified: true, password_hash: HASH, recovery_code_hash: ARGON, totp_key: KEY, totp_last_step: 58_000_000, registered_totp: true };
    expect(parse(line)).toEqual({ line: 3, id: line.id, createdAt: 1, email: 'ada@example.com', emailVerified: true, disabled: false, disabledUntil: null, passwordHash: HASH, recoveryCodeHash: ARGON, totpKey: KEY, totpLastStep: 58_000_000, passkeys: [], apiKeys: [] });
    expect(parse({ password_hash: HASH, id: null, created_at: null, email: null, email_verified: null, recovery_code_hash: null, totp_key: null, totp_last_step: null })).toMatchObject({ id: 'generatedid', email: null, totpKey: null, totpLastStep: null });
    expect(parse({ password_hash: HASH, totp_key: KEY })).toMatchObject({ totpKey: KEY, totpLastStep: 0 });
  });

  test.each([
    ['not JSON', '{"password_hash":', 'line 3: not valid JSON'],
    ['an array', '[1]', 'line 3: not a JSON object'],
    ['null', 'null', 'line 3: not a JSON object'],
    ['no password_hash', { email: 'a@example.com' }, 'line 3: password_hash: required (or null with "migrate_password": true)'],
    ['password_hash null', { password_hash: null }, 'line 3: password_hash: required (or null with "migrate_password": true)'],
    ['password_hash a number', { password_hash: 5 }, 'line 3: password_hash: must be a string'],
    ['an unknown hash format', { password_hash: 'plaintext!' }, 'line 3: password_hash: UNSUPPORTED_PASSWORD_HASH, in no accepted format'],
    ['an argon2 hash that takes 9 s to check', { password_hash: '$argon2id$v=19$m=16,t=49152,p=2$8l6rdW7Nudf63/ufc865tw$EpSF/WQ3FbCGCTs+mFAdmg' }, 'line 3: password_hash: UNSUPPORTED_PASSWORD_HASH, in no accepted format'],
    ['an unknown recovery code hash format', { password_hash: HASH, recovery_code_hash: 'ABCD' }, 'line 3: recovery_code_hash: UNSUPPORTED_PASSWORD_HASH, in no accepted format'],
    ['an id with a slash', { password_hash: HASH, id: 'a/b' }, 'line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['an empty id', { password_hash: HASH, id: '' }, 'line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['an id starting with a dot', { password_hash: HASH, id: '..' }, 'line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['a 65-character id', { password_hash: HASH, id: 'a'.repeat(65) }, 'line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['a numeric id', { password_hash: HASH, id: 7 }, 'line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['created_at as a string', { password_hash: HASH, created_at: '1700000000' }, 'line 3: created_at: must be a whole number from 0 to 253402300799'],
    ['created_at in milliseconds past 9999', { password_hash: HASH, created_at: 1e15 }, 'line 3: created_at: must be a whole number from 0 to 253402300799'],
    ['a negative created_at', { password_hash: HASH, created_at: -1 }, 'line 3: created_at: must be a whole number from 0 to 253402300799'],
    ['a fractional created_at', { password_hash: HASH, created_at: 1.5 }, 'line 3: created_at: must be a whole number from 0 to 253402300799'],
    ['an email without @', { password_hash: HASH, email: 'nobody' }, 'line 3: email: INVALID_DATA, not a valid email address'],
    ['an email with a trailing space', { password_hash: HASH, email: 'a@example.com ' }, 'line 3: email: INVALID_DATA, not a valid email address'],
    ['an email as a number', { password_hash: HASH, email: 1 }, 'line 3: email: INVALID_DATA, not a valid email address'],
    ['email_verified as a string', { password_hash: HASH, email_verified: 'yes' }, 'line 3: email_verified: must be true or false'],
    ['a URL-safe TOTP key', { password_hash: HASH, totp_key: '0KHD8uS1lod4aVpLPC0eDxEiM0Q_' }, 'line 3: totp_key: must be standard padded base64 of 20 bytes, or null'],
    ['an unpadded TOTP key', { password_hash: HASH, totp_key: '0KHD8uS1lod4aVpLPC0eDxEiM0Q' }, 'line 3: totp_key: must be standard padded base64 of 20 bytes, or null'],
    ['a 16-byte TOTP key', { password_hash: HASH, totp_key: 'AAECAwQFBgcICQoLDA0ODw==' }, 'line 3: totp_key: must be standard padded base64 of 20 bytes, or null'],
    ['a TOTP step without a key', { password_hash: HASH, totp_last_step: 4 }, 'line 3: totp_last_step: needs a totp_key'],
    ['a negative TOTP step', { password_hash: HASH, totp_key: KEY, totp_last_step: -4 }, `line 3: totp_last_step: must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`],
  ])('%s → "%s"', (_name, value, expected) => {
    expect(problemOf(value)).toBe(expected as string);
  });

  test('the first bad field in export order is the one named', () => {
    expect(problemOf({ id: '/', password_hash: 'x', email: 'y' })).toBe('line 3: id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit');
  });

  test('problems found across lines read as the CLI prints them', () => {
    const problems: LineProblem[] = [
      { line: 9, kind: 'repeats', field: 'email', firstLine: 2 },
      { line: 10, kind: 'taken', field: 'email' },
      { line: 11, kind: 'taken', field: 'id' },
    ];
    expect(problems.map(describeProblem)).toEqual([
      'line 9: email: already on line 2',
      'line 10: email: EMAIL_ALREADY_USED, held by an existing user',
      'line 11: id: an existing user has this id',
    ]);
  });
});

describe('export lines', () => {
  test('keys in a fixed order, null for a missing TOTP credential', () => {
    const user: StagedUser = { line: 1, id: 'x7gq2m9kd4a8rfe3hn5pjc6w', createdAt: 5, email: 'ä@example.com', emailVerified: true, disabled: false, disabledUntil: null, passwordHash: HASH, recoveryCodeHash: ARGON, totpKey: null, totpLastStep: null, passkeys: [], apiKeys: [] };
    const line = toNdjsonLine(user);
    expect(line).toBe(
      `{"id":"x7gq2m9kd4a8rfe3hn5pjc6w","created_at":5,"email":"ä@example.com","email_verified":true,"disabled":false,"disabled_until":null,"password_hash":${JSON.stringify(HASH)},"recovery_code_hash":${JSON.stringify(ARGON)},"totp_key":null,"totp_last_step":null,"passkeys":[],"api_keys":[]}`,
    );
    expect(Object.keys(JSON.parse(line))).toEqual(['id', 'created_at', 'email', 'email_verified', 'disabled', 'disabled_until', 'password_hash', 'recovery_code_hash', 'totp_key', 'totp_last_step', 'passkeys', 'api_keys']);
    const reparsed = parseImportLine(line, 1, defaults);
    expect(reparsed).toEqual(user);
  });

  test('the account state (API.md §14) goes out and comes back', () => {
    const user: StagedUser = { line: 1, id: 'x7gq2m9kd4a8rfe3hn5pjc6w', createdAt: 5, email: null, emailVerified: false, disabled: true, disabledUntil: 1_900_000_000, passwordHash: HASH, recoveryCodeHash: ARGON, totpKey: null, totpLastStep: null, passkeys: [], apiKeys: [] };
    const line = toNdjsonLine(user);
    expect(line).toContain('"disabled":true,"disabled_until":1900000000,');
    expect(parseImportLine(line, 1, defaults)).toEqual(user);
    expect(parseImportLine(toNdjsonLine({ ...user, disabledUntil: null }), 1, defaults)).toEqual({ ...user, disabledUntil: null });
  });
});

describe('disabled and disabled_until on an import line', () => {
  test('are optional (enabled), must be a boolean and a whole number or null, and an until needs disabled: true', () => {
    expect(parse({ password_hash: HASH, disabled: true })).toMatchObject({ disabled: true, disabledUntil: null });
    expect(parse({ password_hash: HASH, disabled: true, disabled_until: 5 })).toMatchObject({ disabled: true, disabledUntil: 5 });
    expect(parse({ password_hash: HASH, disabled: false, disabled_until: null })).toMatchObject({ disabled: false, disabledUntil: null });
    expect(parse({ password_hash: HASH, disabled: 'yes' })).toMatchObject({ kind: 'invalid', field: 'disabled' });
    expect(parse({ password_hash: HASH, disabled: true, disabled_until: '5' })).toMatchObject({ kind: 'invalid', field: 'disabled_until' });
    expect(parse({ password_hash: HASH, disabled: true, disabled_until: -1 })).toMatchObject({ kind: 'invalid', field: 'disabled_until' });
    expect(parse({ password_hash: HASH, disabled: true, disabled_until: 1.5 })).toMatchObject({ kind: 'invalid', field: 'disabled_until' });
    expect(parse({ password_hash: HASH, disabled_until: 5 })).toMatchObject({ kind: 'invalid', field: 'disabled_until', detail: 'needs disabled: true' });
    expect(parse({ password_hash: HASH, disabled: false, disabled_until: 5 })).toMatchObject({ kind: 'invalid', field: 'disabled_until' });
  });
});

describe('a new recovery code that is never shown', () => {
  test("is in Gatehouse's current argon2id format, different each time, and matches no code", async () => {
    const hashes = Array.from({ length: 2000 }, unguessableRecoveryCodeHash);
    expect(new Set(hashes).size).toBe(2000);
    expect(hashes.every(isCurrentArgon2id)).toBe(true);
    expect(await verifyParsedHash(parsePasswordHash(hashes[0]!)!, 'ABCDEFGHJKLMNPQR')).toBe(false);
  });
});

describe('passkeys in lines (API.md §13)', () => {
  // An ES256 COSE key (kty EC2, alg -7, crv P-256) from a key pair made once with node:crypto.
  const COSE = 'pQECAyYgASFYIKYBDntTBrJhlHwXnyGEGpCSXhT5sAXzOH9a6dS92tAJIlggG6NQa_yzPkH3eRj3l5H4GFtRgBVi6CPKo0D_bccR6W0';
  const passkey = { id: 'pk1', credential_id: 'AAECAwQFBgcICQ', public_key: COSE, counter: 7, transports: ['internal', 'hybrid'], backed_up: true, name: 'Laptop', created_at: 5, last_used_at: 9 };
  const withPasskeys = (...passkeys: unknown[]) => ({ password_hash: HASH, passkeys });

  test('every field read as given; a missing optional field gets its default; export writes them back in a fixed order', () => {
    const parsed = parse({ ...withPasskeys(passkey, { credential_id: 'AQ', public_key: COSE }), recovery_code_hash: ARGON }) as StagedUser;
    expect(parsed.passkeys).toEqual([
      { id: 'pk1', credentialId: 'AAECAwQFBgcICQ', publicKey: COSE, counter: 7, transports: ['internal', 'hybrid'], backedUp: true, name: 'Laptop', createdAt: 5, lastUsedAt: 9 },
      { id: 'generatedid', credentialId: 'AQ', publicKey: COSE, counter: 0, transports: [], backedUp: false, name: 'Passkey', createdAt: 1_800_000_000, lastUsedAt: null },
    ]);
    const line = toNdjsonLine(parsed);
    expect(JSON.parse(line).passkeys[0]).toEqual(passkey);
    expect(Object.keys(JSON.parse(line).passkeys[1])).toEqual(['id', 'credential_id', 'public_key', 'counter', 'transports', 'backed_up', 'name', 'created_at', 'last_used_at']);
    expect(parseImportLine(line, 3, defaults)).toEqual(parsed);
    expect((parse({ password_hash: HASH, passkeys: null }) as StagedUser).passkeys).toEqual([]);
  });

  test.each([
    ['passkeys as an object', { password_hash: HASH, passkeys: {} }, 'passkeys: must be a list of passkeys, or null'],
    ['eleven passkeys', withPasskeys(...Array.from({ length: 11 }, (_, i) => ({ ...passkey, id: `p${i}`, credential_id: `AAE${i}` }))), 'passkeys: at most 10 passkeys a user'],
    ['a passkey as a string', withPasskeys('x'), 'passkeys[0]: must be an object'],
    ['no credential id', withPasskeys({ ...passkey, credential_id: undefined }), 'passkeys[0].credential_id: must be base64url (no padding) of 1 to 1023 bytes'],
    ['a padded credential id', withPasskeys({ ...passkey, credential_id: 'AQ==' }), 'passkeys[0].credential_id: must be base64url (no padding) of 1 to 1023 bytes'],
    ['a public key that is not COSE', withPasskeys({ ...passkey, public_key: 'AAECAw' }), 'passkeys[0].public_key: must be base64url of a COSE public key (ES256, EdDSA or RS256)'],
    ['an unknown transport', withPasskeys({ ...passkey, transports: ['carrier-pigeon'] }), 'passkeys[0].transports: must be a list of distinct values among ble, cable, hybrid, internal, nfc, smart-card, usb'],
    ['a repeated transport', withPasskeys({ ...passkey, transports: ['usb', 'usb'] }), 'passkeys[0].transports: must be a list of distinct values among ble, cable, hybrid, internal, nfc, smart-card, usb'],
    ['a counter past 2³²−1', withPasskeys({ ...passkey, counter: 2 ** 32 }), 'passkeys[0].counter: must be a whole number from 0 to 4294967295'],
    ['backed_up as a string', withPasskeys({ ...passkey, backed_up: 'yes' }), 'passkeys[0].backed_up: must be true or false'],
    ['a name with a newline', withPasskeys({ ...passkey, name: 'a\nb' }), 'passkeys[0].name: must be 1 to 64 characters, no control characters'],
    ['an id with a slash', withPasskeys({ ...passkey, id: 'a/b' }), 'passkeys[0].id: must be 1 to 64 letters, digits or ._~:@|+- starting with a letter or digit'],
    ['a credential id twice in one line', withPasskeys(passkey, { ...passkey, id: 'pk2' }), 'passkeys[1].credential_id: already in passkeys[0]'],
    ['a passkey id twice in one line', withPasskeys(passkey, { ...passkey, credential_id: 'AQ' }), 'passkeys[1].id: already in passkeys[0]'],
  ])('%s → "line 3: %s"', (_name, value, expected) => {
    expect(problemOf(value)).toBe(`line 3: ${expected}`);
  });

  test('problems across lines name the passkey', () => {
    const problems: LineProblem[] = [
      { line: 4, kind: 'repeats', field: 'passkeys[1].credential_id', firstLine: 2 },
      { line: 5, kind: 'taken', field: 'passkeys[0].credential_id' },
      { line: 6, kind: 'taken', field: 'passkeys[2].id' },
    ];
    expect(problems.map(describeProblem)).toEqual([
      'line 4: passkeys[1].credential_id: already on line 2',
      'line 5: passkeys[0].credential_id: PASSKEY_ALREADY_REGISTERED, held by an existing passkey',
      'line 6: passkeys[2].id: an existing passkey has this id',
    ]);
  });
});

describe('API keys in lines (API.md §18)', () => {
  const ID = 'q7m2x9kd4a8rfe3hn5pjc6wb';
  const HASH_HEX = 'a'.repeat(64);
  const withKeys = (...api_keys: unknown[]) => ({ password_hash: HASH, api_keys });
  const key = { id: ID, name: 'CI', scopes: ['repo:read'], secret_hash: HASH_HEX, created_at: 5, expires_at: 6, last_used_at: null };

  test('read as stored, start from the id, an expires_at in the past taken; written back as read', () => {
    const parsed = parse(withKeys(key)) as StagedUser;
    expect(parsed.apiKeys).toEqual([{ id: ID, name: 'CI', scopes: ['repo:read'], secretHash: HASH_HEX, start: `gh_${ID.slice(0, 9)}`, createdAt: 5, expiresAt: 6, lastUsedAt: null }]);
    expect(JSON.parse(toNdjsonLine(parsed)).api_keys).toEqual([key]);
    expect((parse(withKeys({ id: ID, name: 'n', secret_hash: HASH_HEX })) as StagedUser).apiKeys[0]).toMatchObject({ scopes: [], createdAt: 1_800_000_000, expiresAt: null });
  });

  test('each bad key names its field', () => {
    const cases: [unknown, string][] = [
      [{ ...key, id: 'short' }, 'api_keys[0].id'],
      [{ ...key, id: ID.toUpperCase() }, 'api_keys[0].id'],
      [{ ...key, name: '' }, 'api_keys[0].name'],
      [{ ...key, name: 'x'.repeat(65) }, 'api_keys[0].name'],
      [{ ...key, scopes: ['A'] }, 'api_keys[0].scopes'],
      [{ ...key, scopes: Array.from({ length: 33 }, (_, i) => `s${i}`) }, 'api_keys[0].scopes'],
      [{ ...key, secret_hash: 'A'.repeat(64) }, 'api_keys[0].secret_hash'],
      [{ ...key, secret_hash: undefined }, 'api_keys[0].secret_hash'],
      [{ ...key, created_at: -1 }, 'api_keys[0].created_at'],
      [{ ...key, expires_at: 1.5 }, 'api_keys[0].expires_at'],
      ['key', 'api_keys[0]'],
    ];
    for (const [bad, field] of cases) expect({ bad, problem: parse(withKeys(bad)) }).toMatchObject({ bad, problem: { kind: 'invalid', field } });
    expect(parse(withKeys(key, key))).toMatchObject({ kind: 'invalid', field: 'api_keys[1].id' });
    expect(parse({ password_hash: HASH, api_keys: 'x' })).toMatchObject({ kind: 'invalid', field: 'api_keys' });
    expect(parse(withKeys(...Array.from({ length: 101 }, () => key)))).toMatchObject({ kind: 'invalid', field: 'api_keys' });
  });
});
