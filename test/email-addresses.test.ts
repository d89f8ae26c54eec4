import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isValidEmail, meetsEmailRule } from '../src/security/email-address';
import { createHarness, expectError, type Harness, STRONG_PASSWORD } from './support/harness';
import { FastHasher } from './fuzz/seed';

const harness = () => createHarness({ hasher: new FastHasher() });

/** Each is INVALID_DATA by API.md §9 (or the seed's rule); the name says why. */
const MALFORMED: [string, string][] = [
  ['a second recipient after a comma', 'a@evil.example,ceo@corp.example'],
  ['a header after CR LF', 'me@evil.example\r\nBcc: ceo@corp.example'],
  ['LF alone', 'me@evil.example\nx'],
  ['NUL', 'me\u0000@example.com'],
  ['DEL (Cc)', 'me\u007f@example.com'],
  ['C1 control NEL (Cc)', 'me\u0085@example.com'],
  ['zero-width space (Cf)', 'me\u200b@example.com'],
  ['zero-width joiner (Cf)', 'm\u200de@example.com'],
  ['byte order mark (Cf)', '\ufeffme@example.com'],
  ['soft hyphen (Cf)', 'me\u00ad@example.com'],
  ['right-to-left override (Cf)', 'me\u202e@example.com'],
  ['tag character (Cf)', 'me\u{e0041}@example.com'],
  ['line separator (Zl)', 'me\u2028@example.com'],
  ['paragraph separator (Zp)', 'me\u2029@example.com'],
  ['an inner space', 'm e@example.com'],
  ['a tab', 'me\t@example.com'],
  ['a no-break space', 'me\u00a0@example.com'],
  ['an ideographic space', 'me\u3000@example.com'],
  ['leading whitespace', ' me@example.com'],
  ['trailing whitespace', 'me@example.com '],
  ['a semicolon', 'a;b@example.com'],
  ['angle brackets', 'Me <me@example.com>'],
  ['a closing angle bracket', 'me>@example.com'],
  ['parentheses (a comment)', 'me(x)@example.com'],
  ['square brackets', 'me@[192.0.2.1]'],
  ['a backslash', 'm\\e@example.com'],
  ['a double quote', '"me"@example.com'],
  ['no @', 'me.example.com'],
  ['two @', 'a@b@example.com'],
  ['an empty local part', '@example.com'],
  ['"@."', '@.'],
  ['only a dot after @', 'a@.'],
  ['no dot in the domain', 'a@localhost'],
  ['an empty last label', 'a@example.'],
  ['an empty first label', 'a@.example'],
  ['an empty inner label', 'a@example..com'],
  ['an empty domain', 'a@'],
  ['256 code points', `${'x'.repeat(244)}@example.com`],
  ['a lone surrogate', 'a\ud800@example.com'],
  // U+037E (Greek question mark) is canonically a semicolon: NFC turns it into one.
  ['a semicolon after NFC normalisation', 'a\u037eb@example.com'],
];

const WELL_FORMED = [
  'ada@example.com',
  `${'x'.repeat(243)}@example.com`, // 255 code points
  `${'ü'.repeat(243)}@example.com`, // 255 code points, 498 bytes of UTF-8
  "o'reilly+tag@mail.example.co.uk",
  'ünï@exämple.com',
  '😀@example.com',
  'a.b-c_d@sub-domain.example',
];

const createWith = (h: Harness, email: unknown) => h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email } });

describe('malformed email addresses are INVALID_DATA wherever an email is taken (API.md §9)', () => {
  test.each(MALFORMED)('%s', async (_, email) => {
    const h = harness();
    const user = await h.createUser({ email: 'owner@example.com' });
    expectError(await createWith(h, email), 400, 'INVALID_DATA');
    expectError(await h.call('POST', '/authenticate/password', { body: { email, password: STRONG_PASSWORD } }), 400, 'INVALID_DATA');
    expectError(await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email } }), 400, 'INVALID_DATA');
    // Nothing was stored: no new user, no update request (whose code the application would mail).
    expect((await h.call('GET', '/users')).headers.get('x-pagination-total')).toBe('1');
    expect((await h.call('GET', `/users/${user.id}/email-update-requests`)).json).toEqual([]);
  });

  test.each(WELL_FORMED)('%s is accepted', async (email) => {
    const h = harness();
    const res = await createWith(h, email);
    expect(res.status).toBe(200);
    expect(res.json.email).toBe(email.normalize('NFC').toLowerCase());
  });
});

describe('the one-pass check of plain ASCII addresses', () => {
  // Mostly the characters an address is made of, with every forbidden ASCII one and a few non-ASCII.
  const symbol = fc.constantFrom(...'aZ09.@-_+!#~', ...',;<>()[]\\" \t\r\n\u0000\u007f', 'é', 'İ', '\u037e', '\u200b');
  const candidate = fc.array(symbol, { maxLength: 24 }).map((symbols) => symbols.join(''));

  test('agrees with the full rule on every string', () => {
    fc.assert(fc.property(candidate, (value) => isValidEmail(value) === meetsEmailRule(value)), { numRuns: 20_000 });
  });

  test.each([['a@b.c', true], ['a@b', false], ['@b.c', false], ['a@.c', false], ['a@b.', false], ['a@b..c', false], ['.a.@b.c', true], [`${'a'.repeat(251)}@b.c`, true], [`${'a'.repeat(252)}@b.c`, false]] as const)(
    '%s → %p, like the full rule',
    (value, valid) => {
      expect(isValidEmail(value)).toBe(valid);
      expect(meetsEmailRule(value)).toBe(valid);
    },
  );
});

describe('emails are NFC-normalised, then lower-cased, before they are stored or compared', () => {
  const decomposed = 'Rene\u0301@Example.com'; // e + combining acute
  const stored = 'ren\u00e9@example.com'; // é, lower-case

  test('create stores the normalised form', async () => {
    const h = harness();
    const res = await createWith(h, decomposed);
    expect(res.json.email).toBe(stored);
    expect((await h.call('GET', `/users/${res.json.id}`)).json.email).toBe(stored);
  });

  test('create with another spelling of a taken address is EMAIL_ALREADY_USED', async () => {
    const h = harness();
    await createWith(h, decomposed);
    expectError(await createWith(h, 'REN\u00c9@EXAMPLE.COM'), 400, 'EMAIL_ALREADY_USED');
    expectError(await createWith(h, 'rene\u0301@example.com'), 400, 'EMAIL_ALREADY_USED');
  });

  test('authenticate finds the user by any spelling', async () => {
    const h = harness();
    const user = await h.createUser({ email: 'ren\u00e9@example.com' });
    for (const email of [decomposed, 'REN\u00c9@example.COM']) {
      const res = await h.call('POST', '/authenticate/password', { body: { email, password: STRONG_PASSWORD } });
      expect(res.status).toBe(200);
      expect(res.json.id).toBe(user.id);
    }
  });

  test('an email update stores the normalised form, and another spelling of a taken address is EMAIL_ALREADY_USED', async () => {
    const h = harness();
    await h.createUser({ email: stored });
    const other = await h.createUser({ email: 'other@example.com' });
    expectError(await h.call('POST', `/users/${other.id}/email-update-requests`, { body: { email: decomposed } }), 400, 'EMAIL_ALREADY_USED');
    const res = await h.call('POST', `/users/${other.id}/email-update-requests`, { body: { email: 'Zo\u0308e@Example.com' } });
    expect(res.status).toBe(200);
    expect(res.json.email).toBe('z\u00f6e@example.com');
    const verified = await h.call('POST', '/verify-new-email', { body: { request_id: res.json.id, code: res.json.code } });
    expect(verified.json).toEqual({ email: 'z\u00f6e@example.com' });
  });

  test('GET /users email_query matches by any spelling', async () => {
    const h = harness();
    const user = await h.createUser({ email: stored });
    await h.createUser({ email: 'someone@example.com' });
    for (const query of ['rene\u0301', 'REN\u00c9', 'n\u00e9@']) {
      const res = await h.call('GET', `/users?email_query=${encodeURIComponent(query)}`);
      expect({ query, ids: res.json.map((u: { id: string }) => u.id) }).toEqual({ query, ids: [user.id] });
      expect(res.headers.get('x-pagination-total')).toBe('1');
    }
  });
});

describe('email_verified says that a stored address was verified', () => {
  test('a password reset of a user without an email leaves it false; with an email it becomes true', async () => {
    const h = harness();
    for (const [email, expected] of [[null, false], ['ada@example.com', true]] as const) {
      const user = await h.createUser({ email });
      const request = await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} });
      const reset = await h.call('POST', '/reset-password', { body: { request_id: request.json.id, password: 'a brand new passphrase' } });
      expect(reset.status).toBe(204);
      expect((await h.call('GET', `/users/${user.id}`)).json).toMatchObject({ email, email_verified: expected });
    }
  });

  test('verify-email of a user without an email succeeds but leaves it false; with an email it becomes true', async () => {
    const h = harness();
    for (const [email, expected] of [[null, false], ['ada@example.com', true]] as const) {
      const user = await h.createUser({ email });
      const request = await h.call('POST', `/users/${user.id}/email-verification-request`);
      const verified = await h.call('POST', `/users/${user.id}/verify-email`, { body: { code: request.json.code } });
      expect(verified.status).toBe(204);
      expect((await h.call('GET', `/users/${user.id}`)).json).toMatchObject({ email, email_verified: expected });
      expectError(await h.call('GET', `/users/${user.id}/email-verification-request`), 404, 'NOT_FOUND');
    }
  });
});
