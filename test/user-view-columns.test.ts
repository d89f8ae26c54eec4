import { describe, expect, test } from 'bun:test';
import { generateTotpCode, parseTotpKey } from '../src/security/totp';
import { checkLines } from '../src/cli/line-checker';
import type { InputLine } from '../src/transfer/service';
import type { Harness } from './support/harness';
import { passkeyHarness, registered, softAuthenticator } from './support/passkeys';
import { execute } from './support/rows';
import { transferOf } from './support/transfer';

/**
 * GET /users/{id} reads registered_totp and passkey_count from the user row, where triggers keep them
 * (migration 0011). Every path that adds or removes a TOTP credential or a passkey must leave them
 * equal to what counting the credential tables says, on whichever engine GATEHOUSE_TEST_SETUP names.
 */
const KEY = 'DZTYTmomMEvwwP6GsZJHZJkUCHI=';
const OTHER_KEY = Buffer.alloc(20, 9).toString('base64');
const codeFor = (h: Harness, key: string, stepOffset = 0) => generateTotpCode(parseTotpKey(key)!, h.now() + stepOffset * 30_000);

/** What the view shows, and what counting the tables says it should. */
async function compare(h: Harness, id: string) {
  const res = await h.call('GET', `/users/${id}`);
  expect(res.status).toBe(200);
  const [counted] = await execute(
    h,
    'SELECT (SELECT count(*) FROM totp_credentials WHERE user_id = ?) AS totp, (SELECT count(*) FROM passkeys WHERE user_id = ?) AS passkeys',
    id,
    id,
  );
  const listed = (await h.call('GET', `/users?per_page=1000`)).json.find((u: { id: string }) => u.id === id);
  const shown = { registered_totp: res.json.registered_totp, passkey_count: res.json.passkey_count };
  expect(shown).toEqual({ registered_totp: Number(counted!.totp) > 0, passkey_count: Number(counted!.passkeys) });
  expect({ registered_totp: listed.registered_totp, passkey_count: listed.passkey_count }).toEqual(shown);
  return shown;
}

describe('registered_totp and passkey_count follow every path that changes them', () => {
  test('TOTP: register, register again (replace), delete, reset-2fa; a failed register changes nothing', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const other = await h.createUser();
    const path = (suffix: string) => `/users/${user.id}/${suffix}`;
    expect(await compare(h, user.id)).toEqual({ registered_totp: false, passkey_count: 0 });
    expect((await h.call('POST', path('register-totp'), { body: { key: KEY, code: '000000' } })).status).toBe(400);
    expect((await compare(h, user.id)).registered_totp).toBe(false);
    expect((await h.call('POST', path('register-totp'), { body: { key: KEY, code: codeFor(h, KEY) } })).status).toBe(200);
    expect((await compare(h, user.id)).registered_totp).toBe(true);
    expect((await compare(h, other.id)).registered_totp).toBe(false);
    h.advance(60_000);
    expect((await h.call('POST', path('register-totp'), { body: { key: OTHER_KEY, code: codeFor(h, OTHER_KEY) } })).status).toBe(200);
    expect((await compare(h, user.id)).registered_totp).toBe(true);
    expect((await h.call('DELETE', path('totp-credential'))).status).toBe(204);
    expect((await compare(h, user.id)).registered_totp).toBe(false);
    h.advance(60_000);
    expect((await h.call('POST', path('register-totp'), { body: { key: KEY, code: codeFor(h, KEY) } })).status).toBe(200);
    expect((await compare(h, user.id)).registered_totp).toBe(true);
    expect((await h.call('POST', path('reset-2fa'), { body: { recovery_code: user.recovery_code } })).status).toBe(200);
    expect((await compare(h, user.id)).registered_totp).toBe(false);
  });

  test('passkeys: register several, delete one, a refused registration; another user is untouched', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const other = await h.createUser();
    const first = await registered(h, user.id, softAuthenticator());
    expect((await compare(h, user.id)).passkey_count).toBe(1);
    const authenticator = softAuthenticator();
    await registered(h, user.id, authenticator);
    await registered(h, other.id, softAuthenticator());
    expect((await compare(h, user.id)).passkey_count).toBe(2);
    expect((await compare(h, other.id)).passkey_count).toBe(1);
    // The same authenticator's credential again is refused: nothing is added.
    await registered(h, user.id, authenticator).catch(() => undefined);
    expect((await compare(h, user.id)).passkey_count).toBe(2);
    expect((await h.call('DELETE', `/users/${user.id}/passkeys/${first.id}`)).status).toBe(204);
    expect((await compare(h, user.id)).passkey_count).toBe(1);
    expect((await compare(h, other.id)).passkey_count).toBe(1);
  });

  test('parallel registrations and deletions of one user end with the count the table holds', async () => {
    const h = passkeyHarness();
    const user = await h.createUser();
    const made = await Promise.all(Array.from({ length: 6 }, () => registered(h, user.id, softAuthenticator())));
    expect((await compare(h, user.id)).passkey_count).toBe(6);
    await Promise.all([
      ...made.slice(0, 3).map((p) => h.call('DELETE', `/users/${user.id}/passkeys/${p.id}`)),
      ...Array.from({ length: 3 }, () => registered(h, user.id, softAuthenticator())),
    ]);
    expect((await compare(h, user.id)).passkey_count).toBe(6);
  });

  test('an import writes users with TOTP and passkeys; their views count them', async () => {
    const from = passkeyHarness();
    const user = await from.createUser({ email: 'moving@example.com' });
    expect((await from.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: codeFor(from, KEY) } })).status).toBe(200);
    await registered(from, user.id, softAuthenticator());
    await registered(from, user.id, softAuthenticator());
    const plain = await from.createUser({ email: 'plain@example.com' });
    let text = '';
    await transferOf(from).exportUsers(async (chunk) => void (text += chunk), () => {});

    const to = passkeyHarness();
    await to.ready;
    const lines: InputLine[] = text.split('\n').map((line, i) => ({ number: i + 1, text: line }));
    const outcome = await transferOf(to).importUsers((now) => checkLines((async function* () { yield lines; })(), now), {
      onConflict: 'fail',
      signal: new AbortController().signal,
      progress: { reading() {}, loading() {}, writing() {}, end() {} },
      report: () => {},
    });
    expect(outcome).toMatchObject({ imported: 2 });
    expect(await compare(to, user.id)).toEqual({ registered_totp: true, passkey_count: 2 });
    expect(await compare(to, plain.id)).toEqual({ registered_totp: false, passkey_count: 0 });
  });
});

