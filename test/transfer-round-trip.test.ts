import { describe, expect, test } from 'bun:test';
import { generateTotpCode, parseTotpKey } from '../src/security/totp';
import type { InputLine } from '../src/transfer/service';
import { checkLines } from '../src/cli/line-checker';
import type { Harness } from './support/harness';
import { login, passkeyHarness, registered, secondFactor, softAuthenticator } from './support/passkeys';
import { transferOf, exportText } from './support/transfer';

/**
 * Export and import through the transfer service on the set-up's own database (SQLite, or PostgreSQL
 * while one or two instances serve it): users with TOTP and passkeys come out of one service and work
 * in another, and the second export is the first byte for byte (API.md §11, §13).
 */
const TOTP_KEY = 'DZTYTmomMEvwwP6GsZJHZJkUCHI=';
const expectUserDisabled = (res: { status: number; json: any }) => expect([res.status, res.json?.error]).toEqual([400, 'USER_DISABLED']);

async function importText(h: Harness, text: string, onConflict: 'fail' | 'skip' = 'fail') {
  const lines: InputLine[] = text.split('\n').map((line, i) => ({ number: i + 1, text: line }));
  const reported: string[] = [];
  const outcome = await transferOf(h).importUsers(
    (now) =>
      checkLines(
        (async function* () {
          yield lines;
        })(),
        now,
      ),
    { onConflict, signal: new AbortController().signal, progress: { reading() {}, loading() {}, writing() {}, end() {} }, report: (line) => reported.push(line) },
  );
  return { ...outcome, reported };
}

/** A user with an email, TOTP and two passkeys on `h`, and the authenticator that holds the first. */
async function richUser(h: Harness) {
  const user = await h.createUser({ email: 'moving@example.com' });
  const key = parseTotpKey(TOTP_KEY)!;
  expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: TOTP_KEY, code: generateTotpCode(key, h.now()) } })).status).toBe(200);
  const authenticator = softAuthenticator();
  await registered(h, user.id, authenticator, { name: 'Laptop' });
  await registered(h, user.id, softAuthenticator(), { name: 'Phone' });
  return { user, authenticator };
}

const passkeyNames = async (h: Harness, userId: string) =>
  ((await h.call('GET', `/users/${userId}/passkeys`)).json as { name: string }[]).map((p) => p.name).sort();

describe('export → import → export', () => {
  test('the account state travels (API.md §14): disabled, until a time or until enabled; a passed until goes out as enabled', async () => {
    const from = passkeyHarness();
    const forever = await from.createUser({ email: 'forever@example.com' });
    const until = await from.createUser({ email: 'until@example.com' });
    const passed = await from.createUser({ email: 'passed@example.com' });
    const untilAt = Math.floor(from.now() / 1000) + 5 * 365 * 86_400;
    expect((await from.call('POST', `/users/${forever.id}/disable`)).status).toBe(200);
    expect((await from.call('POST', `/users/${until.id}/disable`, { body: { until: untilAt } })).status).toBe(200);
    // The export's clock is the real one, long after the harness's: this until has passed for it.
    expect((await from.call('POST', `/users/${passed.id}/disable`, { body: { until: Math.floor(from.now() / 1000) + 60 } })).status).toBe(200);
    const first = await exportText(from);
    const state = (id: string) => {
      const line = JSON.parse(first.split('\n').find((l) => l.includes(id))!);
      return [line.disabled, line.disabled_until];
    };
    expect([state(forever.id), state(until.id), state(passed.id)]).toEqual([[true, null], [true, untilAt], [false, null]]);

    const to = passkeyHarness();
    await to.ready;
    expect(await importText(to, first)).toMatchObject({ result: 'imported', imported: 3 });
    expect(await exportText(to)).toBe(first);
    expect((await to.call('GET', `/users/${forever.id}`)).json).toMatchObject({ disabled: true, disabled_until: null });
    expect((await to.call('GET', `/users/${until.id}`)).json).toMatchObject({ disabled: true, disabled_until: untilAt });
    expectUserDisabled(await to.call('POST', `/users/${until.id}/email-verification-request`));
    expect((await to.call('GET', `/users/${passed.id}`)).json).toMatchObject({ disabled: false, disabled_until: null });
  });

  test('passkeys and TOTP travel: the imported user signs in with the same passkey, and the second export is the same bytes', async () => {
    const from = passkeyHarness();
    const { user, authenticator } = await richUser(from);
    await from.createUser();
    expect((await login(from, authenticator)).status).toBe(200); // the counter moves on before the export
    const first = await exportText(from);
    expect(first.trim().split('\n')).toHaveLength(2);
    expect(JSON.parse(first.split('\n').find((line) => line.includes(user.id))!).passkeys).toHaveLength(2);

    const to = passkeyHarness();
    await to.ready;
    const imported = await importText(to, first);
    expect(imported).toMatchObject({ result: 'imported', imported: 2, problemLines: 0, reported: [] });
    expect(await exportText(to)).toBe(first);

    const signedIn = await login(to, authenticator);
    expect(signedIn.status).toBe(200);
    expect(signedIn.json.id).toBe(user.id);
    expect((await secondFactor(to, user.id, authenticator)).status).toBe(204);
    expect(await passkeyNames(to, user.id)).toEqual(['Laptop', 'Phone']);
    expect((await to.call('GET', `/users/${user.id}`)).json).toMatchObject({ email: 'moving@example.com', registered_totp: true, passkey_count: 2 });
    const events = (await to.call('GET', '/events?type=user.imported&limit=10')).json as { user_id: string; actor: string | null }[];
    // No request caused them: the import runs from the command line (API.md §17).
    expect(events.map((e) => e.actor)).toEqual(events.map(() => null));
    expect(events.map((e) => e.user_id).sort()).toEqual(JSON.parse(`[${first.trim().split('\n').join(',')}]`).map((u: { id: string }) => u.id).sort());
  });

  test('a passkey whose credential id another user holds: fail imports nothing, skip leaves that line out and names the field', async () => {
    const from = passkeyHarness();
    const { user } = await richUser(from);
    const other = await from.createUser({ email: 'other@example.com' });
    const text = await exportText(from);
    const line = JSON.parse(text.split('\n').find((l) => l.includes(user.id))!);
    const clash = { ...line, id: 'newcomer', email: 'newcomer@example.com', passkeys: [{ ...line.passkeys[1], id: 'fresh-passkey-id' }] };
    const free = { id: 'free', password_hash: line.password_hash };
    const input = `${JSON.stringify(free)}\n${JSON.stringify(clash)}\n`;

    const refused = await importText(from, input, 'fail');
    expect(refused).toMatchObject({ result: 'refused', imported: 0, problemLines: 1, reported: ['line 2: passkeys[0].credential_id: PASSKEY_ALREADY_REGISTERED, held by an existing passkey'] });
    expect((await from.call('GET', '/users/free')).status).toBe(404);

    const skipped = await importText(from, input, 'skip');
    expect(skipped).toMatchObject({ result: 'imported', imported: 1, problemLines: 1 });
    expect((await from.call('GET', '/users/free')).status).toBe(200);
    expect((await from.call('GET', '/users/newcomer')).status).toBe(404);
    expect(await passkeyNames(from, user.id)).toEqual(['Laptop', 'Phone']);
    expect((await from.call('GET', `/users/${other.id}/passkeys`)).json).toEqual([]);
  });

  test('API keys travel as hashes (API.md §18): they verify after the import, an expired one as API_KEY_EXPIRED; the second export is the same bytes', async () => {
    const from = passkeyHarness();
    const user = await from.createUser({ email: 'keys@example.com' });
    const seconds = Math.floor(from.now() / 1000);
    const make = async (body: Record<string, unknown>) => (await from.call('POST', `/users/${user.id}/api-keys`, { body })).json;
    const live = await make({ name: 'CI', scopes: ['repo:read', 'deploy'] });
    // The export and import run on the real clock, long after the harness's: this key has expired for them.
    const expired = await make({ name: 'old', expires_at: seconds + 60 });
    expect((await from.call('POST', '/verify-api-key', { body: { key: live.key } })).status).toBe(200);
    await from.createUser();
    const first = await exportText(from);
    const line = JSON.parse(first.split('\n').find((l) => l.includes(user.id))!);
    // Oldest first, ties (the same second here) by id.
    expect(line.api_keys).toEqual([
      { id: live.id, name: 'CI', scopes: ['repo:read', 'deploy'], secret_hash: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: seconds, expires_at: null, last_used_at: seconds },
      { id: expired.id, name: 'old', scopes: [], secret_hash: expect.stringMatching(/^[0-9a-f]{64}$/), created_at: seconds, expires_at: seconds + 60, last_used_at: null },
    ].sort((a, b) => (a.id < b.id ? -1 : 1)));
    expect(first).not.toContain(live.key.slice(28));

    const to = passkeyHarness();
    await to.ready;
    expect(await importText(to, first)).toMatchObject({ result: 'imported', imported: 2, problemLines: 0 });
    expect(await exportText(to)).toBe(first);
    const verified = await to.call('POST', '/verify-api-key', { body: { key: live.key, scopes: ['deploy'] } });
    expect(verified.status).toBe(200);
    expect(verified.json.api_key).toMatchObject({ id: live.id, user_id: user.id, start: live.start });
    expect(verified.json.user).toMatchObject({ id: user.id, email: 'keys@example.com' });
    to.advance(365 * 86_400_000);
    expect((await to.call('POST', '/verify-api-key', { body: { key: expired.key } })).json).toEqual({ error: 'API_KEY_EXPIRED' });

    // The same keys again, under another user: their ids are taken.
    const again = { ...line, id: 'another', email: 'another@example.com' };
    const refused = await importText(to, `${JSON.stringify(again)}\n`, 'fail');
    expect(refused).toMatchObject({ result: 'refused', imported: 0, problemLines: 1, reported: ['line 1: api_keys[0].id: an existing API key has this id', 'line 1: api_keys[1].id: an existing API key has this id'] });
  });
});
