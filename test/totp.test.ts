import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { createHarness, expectError } from './support/harness';

const STEP_MS = 30_000;
const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const keyOf = (seed: number) => Buffer.from(new Uint8Array(20).map((_, i) => (i * 37 + seed) % 256)).toString('base64');
const KEY = keyOf(251); // contains '+' and '/', so URL-safe variants differ
const OTHER_KEY = keyOf(7);

/** What an authenticator app would show for the key at that time. */
const codeAt = (key: string, ms: number) =>
  TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(key, 'base64')).buffer }), timestamp: ms });

/** A well-formed code that is not the code of any step within ±1 of ms. */
function wrongCodeAt(key: string, ms: number): string {
  const near = [-1, 0, 1].map((d) => codeAt(key, ms + d * STEP_MS));
  return ['000000', '111111', '222222', '333333'].find((c) => !near.includes(c))!;
}

async function setup() {
  const h = createHarness();
  const user = await h.createUser();
  const path = (suffix: string, id = user.id) => `/users/${id}/${suffix}`;
  const code = (stepOffset = 0, key = KEY) => codeAt(key, h.now() + stepOffset * STEP_MS);
  const wrong = (key = KEY) => wrongCodeAt(key, h.now());
  const register = (body: unknown = { key: KEY, code: code() }) => h.call('POST', path('register-totp'), { body });
  const verify = (body: unknown) => h.call('POST', path('verify-2fa/totp'), { body });
  const registeredTotp = async () => (await h.call('GET', `/users/${user.id}`)).json.registered_totp as boolean;
  const resetTwoFactor = (recovery_code: unknown) => h.call('POST', path('reset-2fa'), { body: { recovery_code } });
  return { h, user, path, code, wrong, register, verify, registeredTotp, resetTwoFactor };
}

describe('register-totp', () => {
  test('a correct code registers the key; GET returns the credential; registered_totp follows it', async () => {
    const s = await setup();
    expect(await s.registeredTotp()).toBe(false);
    const res = await s.register();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ user_id: s.user.id, created_at: Math.floor(s.h.now() / 1000), key: KEY });
    expect((await s.h.call('GET', s.path('totp-credential'))).json).toEqual(res.json);
    expect(await s.registeredTotp()).toBe(true);
  });

  test('totp_key is accepted as an alias of key', async () => {
    const s = await setup();
    const res = await s.register({ totp_key: KEY, code: s.code() });
    expect(res.status).toBe(200);
    expect(res.json.key).toBe(KEY);
  });

  test('a wrong code answers INCORRECT_CODE and stores nothing', async () => {
    const s = await setup();
    expectError(await s.register({ key: KEY, code: s.wrong() }), 400, 'INCORRECT_CODE');
    expectError(await s.h.call('GET', s.path('totp-credential')), 404, 'NOT_FOUND');
    expect(await s.registeredTotp()).toBe(false);
  });

  test('malformed keys and codes are INVALID_DATA and count no attempt', async () => {
    const s = await setup();
    const raw = Buffer.from(KEY, 'base64');
    const badKeys: unknown[] = [
      KEY.replaceAll('+', '-').replaceAll('/', '_'),
      KEY.replace(/=+$/, ''),
      raw.subarray(0, 19).toString('base64'),
      Buffer.concat([raw, Buffer.from([1])]).toString('base64'),
      'this is not base64 at all!!=',
      12345,
      null,
    ];
    for (const key of badKeys) expectError(await s.register({ key, code: s.code() }), 400, 'INVALID_DATA');
    for (const totp_key of badKeys) expectError(await s.register({ totp_key, code: s.code() }), 400, 'INVALID_DATA');
    for (const code of ['12345', '1234567', 'abcdef', ' 12345', 123456, null]) {
      expectError(await s.register({ key: KEY, code }), 400, 'INVALID_DATA');
    }
    expectError(await s.register({ code: s.code() }), 400, 'INVALID_DATA');
    expectError(await s.register({ key: KEY }), 400, 'INVALID_DATA');
    expectError(await s.h.call('POST', s.path('register-totp'), { rawBody: 'not json' }), 400, 'INVALID_DATA');
    expect((await s.register()).status).toBe(200);
  });

  test('registering again replaces the credential', async () => {
    const s = await setup();
    expect((await s.register()).status).toBe(200);
    s.h.advance(60_000);
    const res = await s.register({ key: OTHER_KEY, code: s.code(0, OTHER_KEY) });
    expect(res.json).toEqual({ user_id: s.user.id, created_at: Math.floor(s.h.now() / 1000), key: OTHER_KEY });
    s.h.advance(STEP_MS);
    expectError(await s.verify({ code: s.code() }), 400, 'INCORRECT_CODE');
    expect((await s.verify({ code: s.code(0, OTHER_KEY) })).status).toBe(204);
  });

  test('5 wrong codes lock registration for 15 minutes', async () => {
    const s = await setup();
    for (let i = 0; i < 5; i++) expectError(await s.register({ key: KEY, code: s.wrong() }), 400, 'INCORRECT_CODE');
    const locked = await s.register();
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(locked.headers.get('retry-after')).toBe('900');
    s.h.advance(FIFTEEN_MINUTES_MS);
    expect((await s.register()).status).toBe(200);
  });
});

describe('verify-2fa/totp', () => {
  test('re-registering the same key with an older code does not reopen a step already accepted', async () => {
    const s = await setup();
    expect((await s.register()).status).toBe(200);
    const next = s.code(1);
    expect((await s.verify({ code: next })).status).toBe(204);
    expect((await s.register({ key: KEY, code: s.code(-1) })).status).toBe(200);
    expectError(await s.verify({ code: next }), 400, 'INCORRECT_CODE');
    // A new key starts afresh from its own registering step.
    expect((await s.register({ key: OTHER_KEY, code: s.code(-1, OTHER_KEY) })).status).toBe(200);
    expect((await s.verify({ code: s.code(0, OTHER_KEY) })).status).toBe(204);
  });

  test('accepts the codes of one step before and after now, not two', async () => {
    const s = await setup();
    await s.register();
    s.h.advance(3 * STEP_MS); // three steps after the registering one
    expectError(await s.verify({ code: s.code(-2) }), 400, 'INCORRECT_CODE');
    expectError(await s.verify({ code: s.code(2) }), 400, 'INCORRECT_CODE');
    expect((await s.verify({ code: s.code(-1) })).status).toBe(204);
    expect((await s.verify({ code: s.code(0) })).status).toBe(204);
    expect((await s.verify({ code: s.code(1) })).status).toBe(204);
  });

  test('the registering code and a used step are rejected', async () => {
    const s = await setup();
    const registering = s.code();
    await s.register({ key: KEY, code: registering });
    expectError(await s.verify({ code: registering }), 400, 'INCORRECT_CODE');
    s.h.advance(STEP_MS);
    expect((await s.verify({ code: s.code(1) })).status).toBe(204);
    expectError(await s.verify({ code: s.code(1) }), 400, 'INCORRECT_CODE');
    expectError(await s.verify({ code: s.code(0) }), 400, 'INCORRECT_CODE'); // before the last accepted step
  });

  test('10 parallel requests with one valid code give exactly one success', async () => {
    const s = await setup();
    await s.register();
    s.h.advance(STEP_MS);
    const code = s.code();
    const results = await Promise.all(Array.from({ length: 10 }, () => s.verify({ code })));
    expect(results.filter((r) => r.status === 204)).toHaveLength(1);
    const errors = results.filter((r) => r.status !== 204).map((r) => r.json.error);
    expect(errors).toEqual(Array(9).fill('INCORRECT_CODE'));
  });

  test('5 wrong codes lock verification until 15 minutes after the 5th', async () => {
    const s = await setup();
    await s.register();
    s.h.advance(STEP_MS);
    for (let i = 0; i < 4; i++) expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    s.h.advance(60_000);
    expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    const locked = await s.verify({ code: s.code() });
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(locked.headers.get('retry-after')).toBe('900');
    s.h.advance(FIFTEEN_MINUTES_MS - 1000);
    const stillLocked = await s.verify({ code: s.code() });
    expectError(stillLocked, 400, 'TOO_MANY_REQUESTS');
    expect(stillLocked.headers.get('retry-after')).toBe('1');
    s.h.advance(1000);
    expect((await s.verify({ code: s.code() })).status).toBe(204);
  });

  test('a success clears the count of wrong codes', async () => {
    const s = await setup();
    await s.register();
    s.h.advance(STEP_MS);
    for (let i = 0; i < 4; i++) expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    expect((await s.verify({ code: s.code() })).status).toBe(204);
    for (let i = 0; i < 4; i++) expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    s.h.advance(STEP_MS);
    expect((await s.verify({ code: s.code() })).status).toBe(204);
  });

  test('re-registering does not clear the verify lockout, and the lockouts are separate', async () => {
    const s = await setup();
    await s.register();
    for (let i = 0; i < 5; i++) expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    s.h.advance(STEP_MS);
    expect((await s.register()).status).toBe(200);
    s.h.advance(STEP_MS);
    expectError(await s.verify({ code: s.code() }), 400, 'TOO_MANY_REQUESTS');
  });

  test('without a credential: NOT_ALLOWED, after INVALID_DATA and before the lockout', async () => {
    const s = await setup();
    expectError(await s.verify({ code: '123456' }), 400, 'NOT_ALLOWED');
    expectError(await s.verify({ code: '12345' }), 400, 'INVALID_DATA');
    await s.register();
    for (let i = 0; i < 5; i++) expectError(await s.verify({ code: s.wrong() }), 400, 'INCORRECT_CODE');
    expectError(await s.verify({ code: s.code(1) }), 400, 'TOO_MANY_REQUESTS');
    expect((await s.h.call('DELETE', s.path('totp-credential'))).status).toBe(204);
    expectError(await s.verify({ code: s.code(1) }), 400, 'NOT_ALLOWED');
  });

  test('malformed codes are INVALID_DATA and count no attempt', async () => {
    const s = await setup();
    await s.register();
    s.h.advance(STEP_MS);
    for (const code of ['12345', '1234567', 'abcdef', '12 456', 123456, null]) {
      expectError(await s.verify({ code }), 400, 'INVALID_DATA');
    }
    expectError(await s.verify({}), 400, 'INVALID_DATA');
    expectError(await s.h.call('POST', s.path('verify-2fa/totp'), { rawBody: '[1]' }), 400, 'INVALID_DATA');
    expect((await s.verify({ code: s.code() })).status).toBe(204);
  });
});

describe('totp-credential', () => {
  test('DELETE removes it; afterwards GET and DELETE answer 404 and registered_totp is false', async () => {
    const s = await setup();
    expectError(await s.h.call('GET', s.path('totp-credential')), 404, 'NOT_FOUND');
    expectError(await s.h.call('DELETE', s.path('totp-credential')), 404, 'NOT_FOUND');
    await s.register();
    const deleted = await s.h.call('DELETE', s.path('totp-credential'));
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await s.registeredTotp()).toBe(false);
    expectError(await s.h.call('GET', s.path('totp-credential')), 404, 'NOT_FOUND');
    expectError(await s.h.call('DELETE', s.path('totp-credential')), 404, 'NOT_FOUND');
  });
});

describe('recovery code', () => {
  test('regenerating gives a new code and the old one stops working', async () => {
    const s = await setup();
    const res = await s.h.call('POST', s.path('regenerate-recovery-code'));
    expect(res.status).toBe(200);
    expect(res.json.recovery_code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{16}$/);
    expect(res.json.recovery_code).not.toBe(s.user.recovery_code);
    expectError(await s.resetTwoFactor(s.user.recovery_code), 400, 'INCORRECT_CODE');
    expect((await s.resetTwoFactor(res.json.recovery_code)).status).toBe(200);
  });

  test('reset-2fa with the code (any case) deletes the credential and rotates the code', async () => {
    const s = await setup();
    await s.register();
    const res = await s.resetTwoFactor(s.user.recovery_code.toLowerCase());
    expect(res.status).toBe(200);
    expect(res.json.recovery_code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{16}$/);
    expect(await s.registeredTotp()).toBe(false);
    expectError(await s.h.call('GET', s.path('totp-credential')), 404, 'NOT_FOUND');
    expectError(await s.verify({ code: s.code(1) }), 400, 'NOT_ALLOWED');
    expectError(await s.resetTwoFactor(s.user.recovery_code), 400, 'INCORRECT_CODE');
    expect((await s.resetTwoFactor(res.json.recovery_code)).status).toBe(200);
  });

  test('two parallel reset-2fa with the same code: one succeeds, the other is INCORRECT_CODE', async () => {
    const s = await setup();
    await s.register();
    const results = await Promise.all([s.resetTwoFactor(s.user.recovery_code), s.resetTwoFactor(s.user.recovery_code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)!.json).toEqual({ error: 'INCORRECT_CODE' });
    const winner = results.find((r) => r.status === 200)!.json.recovery_code;
    expect((await s.resetTwoFactor(winner)).status).toBe(200);
  });

  test('parallel wrong recovery codes get exactly 5 tries before the lockout', async () => {
    const s = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, () => s.resetTwoFactor('ZZZZZZZZZZZZZZZZ')));
    expect(results.filter((r) => r.json?.error === 'INCORRECT_CODE').length).toBe(5);
    expect(results.filter((r) => r.json?.error === 'TOO_MANY_REQUESTS').length).toBe(5);
  });

  test('malformed recovery codes are INVALID_DATA; 5 wrong ones lock reset-2fa for 15 minutes', async () => {
    const s = await setup();
    for (const code of ['ABC', 'A'.repeat(17), 'ABCDEFGHJKLMNPQ0', 'ABCDEFGHJKLMNPQI', 1234567890123456, null]) {
      expectError(await s.resetTwoFactor(code), 400, 'INVALID_DATA');
    }
    for (let i = 0; i < 5; i++) expectError(await s.resetTwoFactor('ZZZZZZZZZZZZZZZZ'), 400, 'INCORRECT_CODE');
    const locked = await s.resetTwoFactor(s.user.recovery_code);
    expectError(locked, 400, 'TOO_MANY_REQUESTS');
    expect(locked.headers.get('retry-after')).toBe('900');
    s.h.advance(FIFTEEN_MINUTES_MS);
    expect((await s.resetTwoFactor(s.user.recovery_code)).status).toBe(200);
  });
});

test('every endpoint answers 404 for an unknown user, before checking the body', async () => {
  const s = await setup();
  const missing = 'unknownuserunknownuser22';
  const calls: [string, string, unknown][] = [
    ['POST', 'register-totp', { key: KEY, code: s.code() }],
    ['POST', 'register-totp', { key: 'bad' }],
    ['GET', 'totp-credential', undefined],
    ['DELETE', 'totp-credential', undefined],
    ['POST', 'verify-2fa/totp', { code: '123456' }],
    ['POST', 'verify-2fa/totp', { code: 'bad' }],
    ['POST', 'regenerate-recovery-code', undefined],
    ['POST', 'reset-2fa', { recovery_code: s.user.recovery_code }],
    ['POST', 'reset-2fa', {}],
  ];
  for (const [method, suffix, body] of calls) {
    expectError(await s.h.call(method, s.path(suffix, missing), { body }), 404, 'NOT_FOUND');
  }
});

test('no key, TOTP code or recovery code ever appears in a log line', async () => {
  const s = await setup();
  const secrets = [KEY, Buffer.from(KEY, 'base64').toString('hex'), s.user.recovery_code];
  const sent = (code: string) => (secrets.push(code), code);
  await s.register({ key: KEY, code: sent(s.wrong()) });
  await s.register({ totp_key: KEY, code: sent(s.code()) });
  s.h.advance(STEP_MS);
  await s.verify({ code: sent(s.code()) });
  await s.verify({ code: sent(s.wrong()) });
  await s.h.call('GET', s.path('totp-credential'));
  await s.resetTwoFactor(sent('ZZZZZZZZZZZZZZZZ'));
  const regenerated = (await s.h.call('POST', s.path('regenerate-recovery-code'))).json.recovery_code;
  const reset = (await s.resetTwoFactor(sent(regenerated))).json.recovery_code;
  secrets.push(reset);
  await s.h.call('POST', s.path('register-totp'), { rawBody: `{"key":"${KEY}","code":"oops` });
  expect(s.h.logs.length).toBeGreaterThanOrEqual(10);
  for (const line of s.h.logs.map((entry) => JSON.stringify(entry))) {
    for (const secret of secrets) expect(line.includes(secret)).toBe(false);
  }
});
