import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { SWEEP_BATCH_SIZE } from '../src/sweeps/batch-sweeper';
import { startEventSweeper, sweepOldEvents } from '../src/events/service';
import { createHarness, expectError, SECRET, STRONG_PASSWORD, WEAK_PASSWORD } from './support/harness';
import { allowEvents, eventsDuring, expectNoneOf, refuseEvents, storedEvents, summary, tableTexts } from './support/events';
import { execute, insertRows, rowsOf } from './support/rows';

/** Every flow of API.md §4 and the events §12 says it leaves: exactly these, in this order, and nothing secret. */

const IP = '203.0.113.7';
const NEW_PASSWORD = 'a brand new password 42';
const KEY = Buffer.from(new Uint8Array(20).map((_, i) => (i * 37 + 251) % 256)).toString('base64');
const codeAt = (ms: number) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(KEY, 'base64')).buffer }), timestamp: ms });
const wrongTotp = (ms: number) => ['000000', '111111', '222222'].find((c) => ![-1, 0, 1].map((d) => codeAt(ms + d * 30_000)).includes(c))!;
const wrongCodeLike = (code: string) => (code.toUpperCase() === 'AAAAAAAA' ? 'BBBBBBBB' : 'AAAAAAAA');

async function setup() {
  const h = createHarness();
  await h.ready;
  const during = (action: () => Promise<unknown>) => eventsDuring(h, action).then(summary);
  return { h, during };
}

describe('each flow appends exactly its events', () => {
  test('users: created (with client_ip) and deleted; the events outlive the user', async () => {
    const { h, during } = await setup();
    let id = '';
    expect(await during(async () => (id = (await h.createUser({ client_ip: IP })).id))).toEqual([['user.created', id, IP]]);
    expect((await storedEvents(h))[0]!.time).toBe(Math.floor(h.now() / 1000));
    h.advance(5000);
    expect(await during(() => h.call('DELETE', `/users/${id}`))).toEqual([['user.deleted', id, null]]);
    expect((await storedEvents(h)).at(-1)!.time).toBe(Math.floor(h.now() / 1000));
    expect(await during(() => h.call('DELETE', `/users/${id}`))).toEqual([]);
    expect((await storedEvents(h)).map((e) => e.user_id)).toEqual([id, id]);
  });

  test('passwords: each incorrect one is an event; the 5th from an address also blocks it, once', async () => {
    const { h, during } = await setup();
    const user = await h.createUser({ email: 'ada@example.com' });
    // Ten seconds apart, so the address's token bucket (5, one back every 10 s) never refuses first.
    const verify = (password: string) => {
      h.advance(10_000);
      return h.call('POST', `/users/${user.id}/verify-password`, { body: { password, client_ip: IP } });
    };
    expect(await during(() => verify(STRONG_PASSWORD))).toEqual([]);
    for (let i = 0; i < 4; i++) expect(await during(() => verify('not the password'))).toEqual([['password.incorrect', user.id, IP]]);
    expect(await during(() => verify('not the password'))).toEqual([
      ['password.incorrect', user.id, IP],
      ['address.blocked', user.id, IP],
    ]);
    // Refused by the block: no check happened, so no event.
    expect(await during(async () => expectError(await verify('not the password'), 400, 'TOO_MANY_REQUESTS'))).toEqual([]);
    const other = '198.51.100.1';
    const authenticate = (email: string) => h.call('POST', '/authenticate/password', { body: { email, password: 'wrong password!', client_ip: other } });
    expect(await during(() => authenticate('ada@example.com'))).toEqual([['password.incorrect', user.id, other]]);
    // An unknown email is a wrong guess too, of no user.
    expect(await during(() => authenticate('nobody@example.com'))).toEqual([['password.incorrect', null, other]]);
    // Without client_ip there is no block, and the event says no address.
    expect(await during(() => h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'nope nope nope' } }))).toEqual([
      ['password.incorrect', user.id, null],
    ]);
  });

  test('update-password: updated on success, incorrect for a wrong current one, nothing for a weak new one', async () => {
    const { h, during } = await setup();
    const user = await h.createUser();
    const update = (password: string, new_password: string) =>
      h.call('POST', `/users/${user.id}/update-password`, { body: { password, new_password, client_ip: IP } });
    expect(await during(() => update(STRONG_PASSWORD, WEAK_PASSWORD))).toEqual([]);
    expect(await during(() => update('wrong current one', NEW_PASSWORD))).toEqual([['password.incorrect', user.id, IP]]);
    expect(await during(() => update(STRONG_PASSWORD, NEW_PASSWORD))).toEqual([['password.updated', user.id, IP]]);
  });

  test('password reset: only the reset itself is an event (and, on an unproven address, its revocation)', async () => {
    const { h, during } = await setup();
    const user = await h.createUser({ email: 'ada@example.com' });
    let request: { id: string; code: string } = { id: '', code: '' };
    expect(await during(async () => (request = (await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} })).json))).toEqual([]);
    const verify = (code: string) => h.call('POST', `/password-reset-requests/${request.id}/verify-email`, { body: { code } });
    expect(await during(() => verify(wrongCodeLike(request.code)))).toEqual([]);
    expect(await during(() => verify(request.code))).toEqual([]);
    expect(await during(() => h.call('POST', '/reset-password', { body: { request_id: request.id, password: NEW_PASSWORD, client_ip: IP } }))).toEqual([
      ['password.reset', user.id, IP],
      // The address's first proof (API.md §15).
      ['credentials.revoked', user.id, IP],
    ]);
    expect(await during(() => h.call('POST', '/reset-password', { body: { request_id: request.id, password: NEW_PASSWORD } }))).toEqual([]);
  });

  test('email verification: wrong codes are second-factor failures, the 5th locks; success is email.verified', async () => {
    const { h, during } = await setup();
    const user = await h.createUser({ email: 'ada@example.com' });
    const create = async () => (await h.call('POST', `/users/${user.id}/email-verification-request`)).json.code as string;
    let code = '';
    expect(await during(async () => (code = await create()))).toEqual([]);
    const verify = (c: string) => h.call('POST', `/users/${user.id}/verify-email`, { body: { code: c } });
    for (let i = 0; i < 4; i++) expect(await during(() => verify(wrongCodeLike(code)))).toEqual([['second_factor.incorrect', user.id, null]]);
    expect(await during(() => verify(wrongCodeLike(code)))).toEqual([
      ['second_factor.incorrect', user.id, null],
      ['second_factor.locked', user.id, null],
    ]);
    h.advance(15 * 60 * 1000);
    code = await create();
    expect(await during(() => verify(code))).toEqual([['email.verified', user.id, null]]);
  });

  test('email update: a wrong code is a second-factor failure; success is email.updated', async () => {
    const { h, during } = await setup();
    const user = await h.createUser({ email: 'ada@example.com' });
    const request = (await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email: 'ada@new.example' } })).json;
    const confirm = (code: string) => h.call('POST', '/verify-new-email', { body: { request_id: request.id, code } });
    expect(await during(() => confirm(wrongCodeLike(request.code)))).toEqual([['second_factor.incorrect', user.id, null]]);
    expect(await during(() => confirm(request.code))).toEqual([['email.updated', user.id, null]]);
  });

  test('TOTP: registered, wrong codes at registration and verification, removed; a verified code is no event', async () => {
    const { h, during } = await setup();
    const user = await h.createUser();
    const register = (code: string) => h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code } });
    const verify = (code: string) => h.call('POST', `/users/${user.id}/verify-2fa/totp`, { body: { code } });
    expect(await during(() => register(wrongTotp(h.now())))).toEqual([['second_factor.incorrect', user.id, null]]);
    expect(await during(() => register(codeAt(h.now())))).toEqual([['totp.registered', user.id, null]]);
    h.advance(30_000);
    expect(await during(() => verify(wrongTotp(h.now())))).toEqual([['second_factor.incorrect', user.id, null]]);
    expect(await during(() => verify(codeAt(h.now())))).toEqual([]);
    // A replayed code is refused without counting: not a guess at the key, no event.
    expect(await during(() => verify(codeAt(h.now())))).toEqual([]);
    expect(await during(() => h.call('DELETE', `/users/${user.id}/totp-credential`))).toEqual([['totp.removed', user.id, null]]);
    expect(await during(() => h.call('DELETE', `/users/${user.id}/totp-credential`))).toEqual([]);
  });

  test('recovery code: regenerated; used (removing TOTP when there was one); wrong ones are second-factor failures', async () => {
    const { h, during } = await setup();
    const user = await h.createUser();
    let code = user.recovery_code;
    expect(await during(async () => (code = (await h.call('POST', `/users/${user.id}/regenerate-recovery-code`)).json.recovery_code))).toEqual([
      ['recovery_code.regenerated', user.id, null],
    ]);
    const reset = (recovery_code: string) => h.call('POST', `/users/${user.id}/reset-2fa`, { body: { recovery_code } });
    expect(await during(() => reset(user.recovery_code))).toEqual([['second_factor.incorrect', user.id, null]]);
    await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: codeAt(h.now()) } });
    expect(await during(async () => (code = (await reset(code)).json.recovery_code))).toEqual([
      ['recovery_code.used', user.id, null],
      ['totp.removed', user.id, null],
    ]);
    expect(await during(() => reset(code))).toEqual([['recovery_code.used', user.id, null]]);
  });

  test('requests refused before any check leave no event', async () => {
    const { h, during } = await setup();
    const user = await h.createUser();
    const refused = [
      () => h.call('POST', '/users', { body: { password: WEAK_PASSWORD } }),
      () => h.call('POST', '/users', { body: { password: 'short' } }),
      () => h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 7 } }),
      () => h.call('POST', `/users/${user.id}/verify-2fa/totp`, { body: { code: '123456' } }),
      () => h.call('POST', `/users/${user.id}/reset-2fa`, { body: { recovery_code: 'short' } }),
      () => h.call('POST', '/users/nobody/verify-password', { body: { password: 'wrong password!' } }),
    ];
    for (const request of refused) expect(await during(request)).toEqual([]);
  });
});

describe('a change and its events commit together', () => {
  test('when the events cannot be written, the change is not made either', async () => {
    const { h } = await setup();
    const user = await h.createUser();
    await refuseEvents(h);
    expect((await h.call('POST', '/users', { body: { password: STRONG_PASSWORD, email: 'eve@example.com' } })).status).toBe(500);
    expect((await h.call('GET', '/users?email_query=eve')).json).toEqual([]);
    expect((await h.call('DELETE', `/users/${user.id}`)).status).toBe(500);
    expect((await h.call('GET', `/users/${user.id}`)).status).toBe(200);
    expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: codeAt(h.now()) } })).status).toBe(500);
    expect((await h.call('GET', `/users/${user.id}`)).json.registered_totp).toBe(false);
    await allowEvents(h);
    expect((await storedEvents(h)).map((e) => e.type)).toEqual(['user.created']);
  });
});

describe('GET /events', () => {
  async function withEvents() {
    const s = await setup();
    const a = await s.h.createUser({ client_ip: IP });
    const b = await s.h.createUser();
    s.h.advance(1000);
    await s.h.call('POST', `/users/${a.id}/verify-password`, { body: { password: 'wrong password!' } });
    await s.h.call('DELETE', `/users/${b.id}`);
    return { ...s, a, b };
  }

  test('lists every event oldest first with its fields, and X-Next-After as the last id', async () => {
    const { h, a, b } = await withEvents();
    const res = await h.call('GET', '/events');
    expect(res.status).toBe(200);
    const time = Math.floor(h.now() / 1000);
    expect(res.json).toEqual([
      { id: 1, time: time - 1, type: 'user.created', user_id: a.id, client_ip: IP, actor: 'default' },
      { id: 2, time: time - 1, type: 'user.created', user_id: b.id, client_ip: null, actor: 'default' },
      { id: 3, time, type: 'password.incorrect', user_id: a.id, client_ip: null, actor: 'default' },
      { id: 4, time, type: 'user.deleted', user_id: b.id, client_ip: null, actor: 'default' },
    ]);
    expect(res.headers.get('x-next-after')).toBe('4');
  });

  test('filters by user and type; pages with after and limit without skipping or repeating', async () => {
    const { h, a, b } = await withEvents();
    const ids = async (query: string) => (await h.call('GET', `/events${query}`)).json.map((e: { id: number }) => e.id);
    expect(await ids(`?user_id=${a.id}`)).toEqual([1, 3]);
    expect(await ids(`?user_id=${b.id}&type=user.deleted`)).toEqual([4]);
    expect(await ids('?type=user.created&after=1')).toEqual([2]);
    expect(await ids('?user_id=nobody')).toEqual([]);
    const seen: number[] = [];
    let after = '0';
    for (let page = 0; page < 5; page++) {
      const res = await h.call('GET', `/events?limit=3&after=${after}`);
      seen.push(...res.json.map((e: { id: number }) => e.id));
      after = res.headers.get('x-next-after')!;
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(after).toBe('4');
  });

  test('an empty page keeps the after that was sent (0 when none)', async () => {
    const { h } = await withEvents();
    const past = await h.call('GET', '/events?after=99');
    expect(past.json).toEqual([]);
    expect(past.headers.get('x-next-after')).toBe('99');
    const none = await h.call('GET', '/events?type=totp.removed');
    expect(none.headers.get('x-next-after')).toBe('0');
  });

  test('limit defaults to 100 and is at most 1000', async () => {
    const { h } = await setup();
    await insertRows(h, 'events', Array.from({ length: 1500 }, () => ({ time: 1, type: 'user.created' })));
    expect((await h.call('GET', '/events')).json).toHaveLength(100);
    expect((await h.call('GET', '/events?limit=1000')).json).toHaveLength(1000);
    expect((await h.call('GET', '/events?limit=1')).json).toHaveLength(1);
  });

  test('invalid values are INVALID_DATA; empty values are absent', async () => {
    const { h } = await withEvents();
    for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'limit=-1', 'after=-1', 'after=1.5', 'after=x', 'type=user', 'type=USER.CREATED', 'after=1&after=2', 'user_id=a&user_id=b', `after=${'9'.repeat(17)}`]) {
      expect({ query, res: (await h.call('GET', `/events?${query}`)).json }).toEqual({ query, res: { error: 'INVALID_DATA' } });
    }
    expect((await h.call('GET', '/events?type=&user_id=&after=&limit=')).json).toHaveLength(4);
  });

  test('needs the credential', async () => {
    const { h } = await withEvents();
    expectError(await h.call('GET', '/events', { auth: null }), 401, 'NOT_AUTHENTICATED');
  });
});

describe('nothing secret in an event', () => {
  test('no password, code, recovery code, TOTP key, hash or the secret anywhere in the events table', async () => {
    const { h } = await setup();
    const user = await h.createUser({ email: 'ada@example.com', client_ip: IP });
    const secrets = [SECRET, STRONG_PASSWORD, NEW_PASSWORD, 'wrong password!', user.recovery_code, KEY];
    await h.call('POST', `/users/${user.id}/verify-password`, { body: { password: 'wrong password!', client_ip: IP } });
    await h.call('POST', `/users/${user.id}/update-password`, { body: { password: STRONG_PASSWORD, new_password: NEW_PASSWORD, client_ip: IP } });
    await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: codeAt(h.now()) } });
    const reset = (await h.call('POST', `/users/${user.id}/password-reset-requests`, { body: {} })).json;
    const verification = (await h.call('POST', `/users/${user.id}/email-verification-request`)).json;
    await h.call('POST', `/users/${user.id}/verify-email`, { body: { code: verification.code } });
    const next = (await h.call('POST', `/users/${user.id}/reset-2fa`, { body: { recovery_code: user.recovery_code } })).json.recovery_code;
    secrets.push(reset.code, verification.code, next);
    await h.call('POST', '/reset-password', { body: { request_id: reset.id, password: 'reset to this one 9', client_ip: IP } });
    secrets.push('reset to this one 9');
    const stored = await rowsOf(h, 'users');
    secrets.push(...stored.flatMap((row) => [row.passwordHash as string, row.recoveryCodeHash as string]));
    expect((await storedEvents(h)).length).toBeGreaterThanOrEqual(8);
    expectNoneOf(await tableTexts(h, ['events']), secrets);
  });
});

describe('retention', () => {
  const DAY_MS = 24 * 60 * 60 * 1000;

  test('the sweep deletes events older than the retention, in batches, with their outbox rows', async () => {
    const { h } = await setup();
    const nowSeconds = Math.floor(h.now() / 1000);
    const old = Array.from({ length: 1200 }, (_, i) => ({ time: nowSeconds - 91 * 86_400 - i, type: 'user.created' }));
    await insertRows(h, 'events', [...old, { time: nowSeconds - 89 * 86_400, type: 'user.deleted' }]);
    await execute(h, "insert into webhook_deliveries (event_id) select id from events where type = 'user.created' limit 10");
    expect(await sweepOldEvents(h.stores.events, h.now(), 90)).toBe(SWEEP_BATCH_SIZE);
    let total = SWEEP_BATCH_SIZE;
    for (let n = await sweepOldEvents(h.stores.events, h.now(), 90); n > 0; n = await sweepOldEvents(h.stores.events, h.now(), 90)) total += n;
    expect(total).toBe(1200);
    expect((await storedEvents(h)).map((e) => e.type)).toEqual(['user.deleted']);
    expect(await execute(h, 'select cast(count(*) as integer) as n from webhook_deliveries')).toEqual([{ n: 0 }]);
    // A shorter retention reaches the newer one too.
    expect(await sweepOldEvents(h.stores.events, h.now(), 30)).toBe(1);
  });

  test('ids keep growing after the sweep emptied the table, so a reader\'s cursor never skips new events', async () => {
    const { h } = await setup();
    await h.createUser();
    await h.createUser();
    h.advance(100 * DAY_MS);
    while ((await sweepOldEvents(h.stores.events, h.now(), 90)) > 0);
    expect(await storedEvents(h)).toEqual([]);
    await h.createUser();
    expect((await storedEvents(h)).map((e) => e.id)).toEqual([3]);
    expect((await h.call('GET', '/events?after=2')).json).toHaveLength(1);
  });

  test('the background sweeper runs on its interval and logs what it deleted', async () => {
    const { h } = await setup();
    await h.createUser();
    h.advance(91 * DAY_MS);
    const sweeper = startEventSweeper({ store: h.stores.events, clock: h.deps.clock, log: h.deps.log, retentionDays: 90 }, 5);
    try {
      for (let i = 0; i < 200 && !h.logs.some((line) => line.message === 'swept old events'); i++) await Bun.sleep(5);
    } finally {
      sweeper.stop();
    }
    expect(h.logs.find((line) => line.message === 'swept old events')).toMatchObject({ deleted: 1 });
    expect((await h.call('GET', '/events')).json).toEqual([]);
  });
});
