import fc from 'fast-check';
import { STRONG_PASSWORD, WEAK_PASSWORD } from '../support/harness';
import { API_KEY, CODES, EMAILS, PASSKEYS, RECOVERY_CODE, RESETS, SIGN_INS, TOTP_CODES, TOTP_KEYS, UPDATES, USERS } from './seed';

/** Lone surrogates, bidi overrides, zero-width, joiners, NUL, line separators and other troublemakers. */
const ODD = [
  '\u0000', '\uD800', '\uDFFF', '\uDBFF\uDFFF', 'a\uDC00b', '\u202E', '\u200F', '\u061C', '\u200B', '\u200D', '\uFEFF',
  '👩‍👩‍👧‍👦', '🇺🇳', 'e\u0301', '\u0130', 'ß', 'ﬀ', '\u2028', '\u2029', '\r\n', '\t', '"', '\\', "'", '%00', '%zz',
  '${x}', '<script>', "' or 1=1 --", '__proto__', 'ǅ', '\u{10FFFF}', '\u{E0001}', '\uFFFD', '\u0085', ' ',
];
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 6 })), { maxLength: 12 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ODD, 'a', 'é', '😀'), fc.integer({ min: 50, max: 12_000 })).map(([s, n]) => s.repeat(n)) },
);

/** Any JSON value a client could send where a field is expected: wrong types, nulls, huge numbers, odd text. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, -1, 0.5, 1e308, -1e308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, '', ' ', [], {}, [null], { '': '' }),
  oddString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.double(),
);

/** Names of Object.prototype members and other keys that code may trip over when it meets them as data. */
const PROTOTYPE_KEYS = [
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty', 'isPrototypeOf',
  'propertyIsEnumerable', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__', 'toJSON', 'then', 'length',
];
const HOSTILE_NAMES = [...PROTOTYPE_KEYS, '', ' ', 'password ', 'PASSWORD', 'id', 'user_id', 'email_verified'];
export const fieldName = fc.oneof(fc.constantFrom(...HOSTILE_NAMES), oddString.filter((s) => s.length < 50));

/** JSON text placed as is where a value goes: `{"__proto__": ...}` cannot be built as a plain object and stringified. */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
const renderValue = (value: unknown): string => (value instanceof RawJson ? value.text : JSON.stringify(value) ?? 'null');

/** Objects whose keys are Object.prototype member names (their string form throws: no callable toString or valueOf), and arrays of them. */
const hostileObject: fc.Arbitrary<RawJson> = fc
  .tuple(
    fc.uniqueArray(fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS), fc.constantFrom<unknown>(1, 0, null, true, 'x', {}, [], { toString: 1 })), { minLength: 1, maxLength: 4, selector: ([key]) => key }),
    fc.constantFrom('object', 'array', 'nested'),
  )
  .map(([entries, shape]) => {
    const object = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
    return new RawJson(shape === 'object' ? object : shape === 'array' ? `[${object}]` : `{"a":${object}}`);
  });

/** Control, format and separator characters (Unicode Cc, Cf, Zl, Zp), as they would be smuggled into a field. */
const CONTROL_CHARS = [
  '\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\v', '\f', '\r', '\u001b', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f', '\u00ad',
  '\u061c', '\u180e', '\u200b', '\u200c', '\u200d', '\u200e', '\u200f', '\u2028', '\u2029', '\u202a', '\u202e', '\u2060', '\u2066', '\ufeff', '\u{e0001}', '\u{e007f}',
];
/** A string with a control character at its start, its end or inside, or CR LF and a header after it. */
const withControl = (base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  fc.tuple(base, fc.constantFrom(...CONTROL_CHARS), fc.nat(), fc.boolean()).map(([value, char, at, header]) => {
    const text = typeof value === 'string' ? value : 'ada@example.com';
    if (header) return `${text}\r\nBcc: ceo@corp.example`;
    const i = at % (text.length + 1);
    return text.slice(0, i) + char + text.slice(i);
  });

const allCodes = Object.values(CODES);
const urlSafe = (key: string) => key.replace(/\+/g, '-').replace(/\//g, '_');
const ALL_FF_KEY = Buffer.alloc(20, 0xff).toString('base64');
const passwords = [
  STRONG_PASSWORD, STRONG_PASSWORD.toUpperCase(), 'another strong password 9', WEAK_PASSWORD, 'password', 'a'.repeat(7), 'a'.repeat(8),
  'b'.repeat(127), 'b'.repeat(128), '😀'.repeat(7), '😀'.repeat(8), '😀'.repeat(127), '😀'.repeat(128), ' '.repeat(8), '\u0000'.repeat(8), 'pass\uD800word',
];

/** Values near and at the edge of valid for each field name the API uses, mixing right and wrong secrets. */
const FIELD_VALUES: Record<string, unknown[]> = {
  password: passwords,
  new_password: passwords,
  email: [
    EMAILS.mail, EMAILS.mail.toUpperCase(), EMAILS.totp, EMAILS.fresh, EMAILS.last, EMAILS.off, 'fresh.user@example.org', ' ada@example.com', 'ada@example.com ',
    'no-at-sign', 'a@b', '@.', 'a@b.', `${'x'.repeat(243)}@example.com`, `${'x'.repeat(244)}@example.com`, 'a@b@c.d', null, 'ünï@exämple.com', 'İ@example.com',
  ],
  code: [...allCodes, ...allCodes.map((c) => c.toLowerCase()), ...TOTP_CODES.seeded, ...TOTP_CODES.other, 'AAAAAAAA', 'ABCDEFGI', 'ABCDEFG', 'ABCDEFGHJ', '123456', '12345', '1234567', '１２３４５６', 'ABCDEFGO'],
  recovery_code: [RECOVERY_CODE, RECOVERY_CODE.toLowerCase(), 'A'.repeat(16), RECOVERY_CODE.slice(1), `${RECOVERY_CODE}A`, 'RECOVERYCODE1234'],
  key: [TOTP_KEYS.seeded, TOTP_KEYS.other, ALL_FF_KEY, urlSafe(ALL_FF_KEY), TOTP_KEYS.other.replace(/=+$/, ''), Buffer.alloc(21, 7).toString('base64'), Buffer.alloc(19, 7).toString('base64'), 'AAAA', `${TOTP_KEYS.other.slice(0, 26)}B=`],
  request_id: [...Object.values(RESETS), ...Object.values(UPDATES), ...Object.values(SIGN_INS), ...Object.values(USERS), RESETS.open.toUpperCase(), ''],
  client_ip: [null, '', '203.0.113.7', '2001:db8::1', '[2001:db8::1]', '::ffff:1.2.3.4', 'x'.repeat(64), 'x'.repeat(65), 'not an ip', '999.1.1.1', 'fe80::1%eth0'],
};
FIELD_VALUES.totp_key = FIELD_VALUES.key!;
// Imported hashes (API.md §11): one of a known format, Gatehouse's own shape, and near misses.
const BCRYPT = '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC';
FIELD_VALUES.password_hash = [BCRYPT, BCRYPT.slice(0, -1), BCRYPT.replace('$2y$04$', '$2y$32$'), '$2x$04$' + BCRYPT.slice(7), '5f4dcc3b5aa765d61d8327deb882cf99', 'plain text', '', '$argon2id$v=19$m=19456,t=2,p=1$'];
// Passkeys (API.md §13): the seeded challenges and answers, and hostile credential objects.
const { ids: PK, answers: PK_ANSWERS } = PASSKEYS;
Object.assign(FIELD_VALUES, {
  challenge_id: [PK.registration, PK.registrationTaken, PK.login, PK.secondFactor, PK.expired, PK.passkey, PK.login.toUpperCase(), ''],
  response: [...Object.values(PK_ANSWERS), ...PASSKEYS.hostile],
  name: ['Work laptop', '', ' ', '🔑'.repeat(64), '🔑'.repeat(65), 'a\u0000b', 'x'.repeat(64)],
  user_verification: ['required', 'preferred', 'discouraged', 'REQUIRED', ''],
  user_id: [...Object.values(USERS), null, '', 'x'],
  purpose: ['login', 'second_factor', 'Login', ''],
});
export const CLIENT_IPS = FIELD_VALUES.client_ip!.filter((ip): ip is string => typeof ip === 'string' && ip !== '');

/** The values that pass for each field, so that near-valid bodies often reach the operation itself. */
const GOOD: Record<string, unknown[]> = {
  password: [STRONG_PASSWORD],
  email: [EMAILS.mail, EMAILS.totp, EMAILS.mail.toUpperCase(), 'fresh.user@example.org', null],
  recovery_code: [RECOVERY_CODE, RECOVERY_CODE.toLowerCase()],
  client_ip: [null, '', '203.0.113.7', '2001:db8::1'],
  '/authenticate/password email': [EMAILS.mail, EMAILS.totp.toUpperCase(), EMAILS.off],
  // Required here (API.md §14): "" and null are INVALID_DATA.
  '/clear-address-limits client_ip': ['203.0.113.7', '2001:db8::1'],
  '/users/:id/verify-email code': [CODES.verifyMail, CODES.verifyMail.toLowerCase()],
  '/password-reset-requests/:id/verify-email code': [CODES.resetOpen, CODES.resetOpen.toLowerCase()],
  '/verify-new-email code': [CODES.updateFresh, CODES.updateFresh.toLowerCase()],
  '/verify-new-email request_id': [UPDATES.fresh],
  '/reset-password request_id': [RESETS.open, RESETS.last],
  '/email-sign-in-requests email': [EMAILS.mail, EMAILS.totp.toUpperCase(), 'nobody@example.org'],
  '/authenticate/email-code request_id': [SIGN_INS.open, SIGN_INS.last],
  '/authenticate/email-code code': [CODES.signInOpen, CODES.signInOpen.toLowerCase(), CODES.signInLast],
  '/users/:id/register-totp key': [TOTP_KEYS.other],
  '/users/:id/register-totp totp_key': [TOTP_KEYS.other],
  '/users/:id/register-totp code': [TOTP_CODES.other[2], TOTP_CODES.other[3]],
  '/users/:id/verify-2fa/totp code': [TOTP_CODES.seeded[2], TOTP_CODES.seeded[3]],
};
// A new password passes every body rule also when breached: half the good ones reach the strength check's refusal.
GOOD.new_password = [STRONG_PASSWORD, WEAK_PASSWORD];
GOOD['/reset-password password'] = GOOD.new_password;
GOOD.password_hash = [BCRYPT];
Object.assign(GOOD, {
  name: ['Work laptop'],
  user_verification: ['preferred', 'required'],
  '/users/:id/passkeys challenge_id': [PK.registration],
  '/users/:id/passkeys response': [PK_ANSWERS.registration, PK_ANSWERS.registrationTaken],
  '/authenticate/passkey challenge_id': [PK.login],
  '/authenticate/passkey response': [PK_ANSWERS.login],
  '/users/:id/verify-2fa/passkey challenge_id': [PK.secondFactor],
  '/users/:id/verify-2fa/passkey response': [PK_ANSWERS.secondFactor],
  '/passkey-authentication-options user_id': [USERS.mail, null],
  '/passkey-authentication-options purpose': ['login', 'second_factor'],
  '/verify-api-key key': [API_KEY.key],
});

const fieldValue = (routePath: string, name: string): fc.Arbitrary<unknown> => {
  const pool = FIELD_VALUES[name];
  const good = GOOD[`${routePath} ${name}`] ?? GOOD[name];
  if (pool === undefined) return hostileValue;
  const known = fc.constantFrom(...(good ?? pool));
  return fc.oneof(
    { weight: good === undefined ? 0 : 6, arbitrary: fc.constantFrom(...(good ?? [null])) },
    { weight: 4, arbitrary: fc.constantFrom(...pool) },
    { weight: 1, arbitrary: hostileValue },
    { weight: 1, arbitrary: oddString },
    { weight: 1, arbitrary: withControl(known) },
    { weight: 1, arbitrary: hostileObject },
  );
};

/** Key-value pairs, rendered as raw JSON text so that a key may repeat (the last one wins in JSON.parse). */
export type Entries = [string, unknown][];
export const renderEntries = (entries: Entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${renderValue(v)}`).join(',')}}`;

/** Fields of which a valid body has exactly one (API.md §11): mostly one or the other, sometimes both. */
const EXCLUSIVE: [string, string][] = [['password', 'password_hash']];
type Exclusive = 'first' | 'second' | 'both';
const keeps = (keep: Exclusive, name: string) =>
  keep === 'both' || !EXCLUSIVE.some(([first, second]) => (keep === 'first' ? name === second : name === first));

/** An object from the endpoint's real field names: each may be missing, wrong or repeated; unknown ones join in. */
export function nearValidEntries(route: { path: string; fields: string[] }): fc.Arbitrary<Entries> {
  const { path, fields } = route;
  const entry = (name: string) => fieldValue(path, name).map((v): [string, unknown] => [name, v]);
  const present = fields.map((name) => fc.option(entry(name), { freq: 9, nil: undefined }));
  const duplicate = fields.length === 0 ? fc.constant([]) : fc.array(fc.constantFrom(...fields).chain(entry), { maxLength: 2 });
  const extra = fc.array(fc.tuple(fieldName, hostileValue), { maxLength: 2 });
  const exclusive = fc.constantFrom<Exclusive>('first', 'first', 'first', 'first', 'second', 'second', 'second', 'second', 'both');
  const duplicates = fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: duplicate });
  const extras = fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extra });
  return fc.tuple(fc.tuple(...present), duplicates, extras, fc.boolean(), exclusive).map(([own, dup, more, dupFirst, keep]) => {
    const base = own.filter((e): e is [string, unknown] => e !== undefined).filter(([name]) => keeps(keep, name));
    return [...(dupFirst ? dup : []), ...base, ...(dupFirst ? [] : dup), ...more];
  });
}

/** A request body as sent on the wire. */
export type Payload = { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'bytes'; bytes: Uint8Array };

/** Counterexamples print a preview: a 60 KiB body would bury fast-check's seed and path. */
const preview = <T extends object>(payload: T, show: string): T =>
  Object.defineProperty(payload, fc.toStringMethod, { value: () => (show.length > 300 ? `${show.slice(0, 300)}…(${show.length} chars)` : show) });
const text = (t: string): Payload => preview({ kind: 'text', text: t }, `text ${JSON.stringify(t)}`);
const bytes = (b: Uint8Array): Payload => preview({ kind: 'bytes', bytes: b }, `bytes ${Buffer.from(b).toString('hex')}`);
export const nearValidPayload = (route: { path: string; fields: string[] }) => nearValidEntries(route).map((e) => text(renderEntries(e)));

const deep = fc.tuple(fc.constantFrom(10, 31, 32, 33, 100, 1000, 10_000), fc.constantFrom('array', 'object')).map(([n, shape]) =>
  shape === 'array' ? `${'['.repeat(n)}${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`,
);
/** Number literals JSON.stringify cannot produce: beyond double range, beyond 2^53, denormal. */
const HUGE_NUMBERS = ['1e999', '-1e999', '123456789012345678901234567890', '-0', '1E-400', '9007199254740993', '0.1e1'];
const RAW_TEXTS = [
  '', ' ', 'null', 'true', '0', '-0', '1e999', '-1e999', '123456789012345678901234567890', '""', '"{}"', '[]', '[{}]', '{', '}', '{"a":1}{"b":2}',
  '{"password":NaN}', "{'password':'x'}", '{password:"x"}', '{"a":1,}', '\uFEFF{}', '{}garbage', 'password=x&email=y', '--xyz\r\nContent-Disposition: form-data; name="password"\r\n\r\nx\r\n--xyz--',
  '<xml/>', '\u0000', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}', '{"a":"\\ud800"}', '{"a":"\\u0000"}',
];

/** Random and hostile bodies: JSON of any type, raw text, deep nesting, duplicate keys, invalid UTF-8, UTF-16. */
export function hostilePayload(route: { path: string; fields: string[] }): fc.Arbitrary<Payload> {
  const { fields } = route;
  const field = fields.length > 0 ? fc.constantFrom(...fields) : fieldName;
  return fc.oneof(
    fc.constant<Payload>({ kind: 'none' }),
    hostileValue.map((v) => text(JSON.stringify(v) ?? 'null')),
    fc.dictionary(fieldName, hostileValue, { maxKeys: 4 }).map((o) => text(JSON.stringify(o))),
    nearValidEntries(route).map((e) => text(renderEntries(e))),
    fc.constantFrom(...RAW_TEXTS).map(text),
    deep.map(text),
    fc.tuple(field, deep).map(([name, d]) => text(`{${JSON.stringify(name)}:${d}}`)),
    fc.tuple(nearValidEntries(route), deep).map(([e, d]) => text(renderEntries([...e, ['extra', 0]]).replace(/0}$/, `${d}}`))),
    fc.tuple(field, oddString).map(([name, s]) => text(`{${JSON.stringify(name)}:${JSON.stringify(s)}}`)),
    fc.tuple(nearValidEntries(route), field, hostileObject).map(([e, name, o]) => text(renderEntries([...e, [name, o]]))),
    fc.tuple(nearValidEntries(route), field, withControl(oddString)).map(([e, name, v]) => text(renderEntries([...e, [name, v]]))),
    fc.tuple(field, fc.integer({ min: 1_000, max: 60_000 }), fc.constantFrom('a', 'é', '😀', '\u0000', '@')).map(([name, n, c]) => text(`{${JSON.stringify(name)}:${JSON.stringify(c.repeat(n))}}`)),
    fc.tuple(field, fc.constantFrom(...HUGE_NUMBERS)).map(([name, n]) => text(`{${JSON.stringify(name)}:${n}}`)),
    fc.uint8Array({ maxLength: 200 }).map(bytes),
    fc.tuple(field, fc.uint8Array({ minLength: 1, maxLength: 20 }), fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]))
      .map(([name, noise, bad]) => bytes(Buffer.concat([Buffer.from(`{${JSON.stringify(name)}:"`), Buffer.from(bad), Buffer.from(noise), Buffer.from('12345678"}')]))),
    nearValidEntries(route).map((e) => bytes(Buffer.from(`\uFEFF${renderEntries(e)}`, 'utf16le'))),
    fc.integer({ min: 64 * 1024 - 16, max: 70 * 1024 }).map((n) => text(`{"password":"${'p'.repeat(n)}"}`)),
  );
}

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'text/plain', 'text/plain; charset=iso-8859-1', 'application/x-www-form-urlencoded', 'multipart/form-data',
  'multipart/form-data; boundary=xyz', 'application/octet-stream', 'application/xml', 'text/html', 'application/vnd.api+json', '', '*/*', 'garbage', 'application/json; charset=utf-16', 'image/png',
];
export const contentType = fc.option(
  fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...CONTENT_TYPES) }, { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, '').trim()) }),
  { freq: 5, nil: undefined },
);
