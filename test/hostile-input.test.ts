import { describe, expect, test } from 'bun:test';
import { createHarness, SECRET, STRONG_PASSWORD } from './support/harness';
import { servedRoutes } from './fuzz/contract';
import { FUZZ_RP } from './fuzz/passkeys-seed';
import { FastHasher, NOW_MS, PASSKEYS, RECOVERY_CODE, RESETS, seedResetterOf, TOTP_KEYS, UPDATES, USERS } from './fuzz/seed';
import { execute, snapshot } from './support/rows';

const h = createHarness({ hasher: new FastHasher(), startMs: NOW_MS, relyingParty: FUZZ_RP });
await h.ready;
const restoreSeed = seedResetterOf(h);
/** Every table's rows, on whichever database the set-up uses. */
const everyRow = async () => JSON.stringify(await snapshot(h));
const routes = (await servedRoutes(h)).filter((route) => route.fields.length > 0);

/** A value that passes for each field, so that the field under test is the one validation trips on. */
function validValue(path: string, field: string): unknown {
  if (field === 'code') return path.includes('totp') ? '123456' : 'ABCDEFGH';
  const values: Record<string, unknown> = {
    password: STRONG_PASSWORD,
    new_password: 'another long passphrase',
    email: 'hostile@example.com',
    client_ip: '203.0.113.9',
    request_id: path === '/reset-password' ? RESETS.open : UPDATES.fresh,
    recovery_code: RECOVERY_CODE,
    key: TOTP_KEYS.other,
    totp_key: TOTP_KEYS.other,
    password_hash: '$2y$04$gcgP/Qo3C9f/OEgzwbmsHuLsqTggE3jrIB/8cbgW9nTXU/WSaEYrC',
    purpose: 'login',
    user_id: USERS.totp,
    user_verification: 'preferred',
    challenge_id: 'x7gq2m9kd4a8rfe3hn5pjc6w',
    response: {},
    name: 'My key',
    scopes: ['repo:read'],
    expires_at: Math.floor(NOW_MS / 1000) + 3600,
  };
  if (!(field in values)) throw new Error(`no valid value for ${path} ${field}`);
  return values[field];
}

/** The seeded passkey belongs to the mail user, so its routes name that user. */
const pathOf = (template: string) =>
  template.includes(':passkey_id')
    ? template.replace(':id', USERS.mail).replace(':passkey_id', PASSKEYS.ids.passkey)
    : template.replace(':id', template.startsWith('/users/') ? USERS.totp : template.startsWith('/password-reset-requests/') ? RESETS.open : UPDATES.fresh);

/** Where a string belongs: objects and arrays whose string form throws (`${value}` finds no callable toString or valueOf). */
const HOSTILE_VALUES: [string, string][] = [
  ['toString', '{"toString":1}'],
  ['valueOf and toString', '{"valueOf":1,"toString":1}'],
  ['toString as an object', '{"toString":{}}'],
  ['constructor', '{"constructor":{"prototype":{"toString":1}}}'],
  ['__proto__', '{"__proto__":{"toString":1}}'],
  ['hasOwnProperty', '{"hasOwnProperty":1,"toString":null}'],
  ['an array of such objects', '[{"toString":1}]'],
  ['Symbol.toPrimitive by name', '{"Symbol.toPrimitive":1,"toString":"x"}'],
];

/** The other of two exclusive fields (API.md §11) stays out, so the hostile one is what validation meets. */
const withoutRival = (fields: string[], hostileField: string) =>
  fields.filter((field) => !(hostileField === 'password_hash' ? field === 'password' : field === 'password_hash'));

const rawJsonBody = (path: string, fields: string[], hostileField: string, hostile: string) =>
  `{${withoutRival(fields, hostileField).map((field) => `${JSON.stringify(field)}:${field === hostileField ? hostile : JSON.stringify(validValue(path, field))}`).join(',')}}`;

describe('a string field holding an object with Object.prototype member names (issue 11: 500 from Elysia\'s message formatter)', () => {
  test('covers every route with body fields', () => {
    expect(routes.length).toBeGreaterThan(12);
  });

  for (const [name, hostile] of HOSTILE_VALUES) {
    test(`${name}: every field of every route answers 400 INVALID_DATA and changes nothing`, async () => {
      for (const route of routes) {
        for (const field of route.fields) {
          await restoreSeed();
          const before = await everyRow();
          const body = rawJsonBody(route.path, route.fields, field, hostile);
          const res = await h.call(route.method, pathOf(route.path), { rawBody: body });
          expect({ route: `${route.method} ${route.path}`, field, status: res.status, body: res.text }).toEqual({
            route: `${route.method} ${route.path}`,
            field,
            status: 400,
            body: '{"error":"INVALID_DATA"}',
          });
          const after = await everyRow();
          expect(after).toBe(before);
        }
      }
      expect(h.logs.filter((line) => line.level === 'error')).toEqual([]);
    }, 60_000); // every field of every route, the database restored and compared for each
  }
});

describe('bodies that are not valid UTF-8 (API.md §9)', () => {
  const send = (path: string, bytes: Uint8Array) =>
    h.handle(new Request(`http://localhost${path}`, { method: 'POST', headers: { authorization: SECRET }, body: bytes }));
  const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

  test('are INVALID_DATA, so two differently broken passwords can never be the same password', async () => {
    await restoreSeed();
    const users = async () => Number((await execute(h, 'select count(*) as n from users'))[0]!.n);
    const seeded = await users();
    for (const password of ['p\xe4ssw\xf6rd long enough', 'p\xffssw\x80rd long enough']) {
      const res = await send('/users', latin1(`{"password":"${password}"}`));
      expect(res.status).toBe(400);
      expect(await res.text()).toBe('{"error":"INVALID_DATA"}');
    }
    expect(await users()).toBe(seeded); // no user created
  });

  test('wherever the bad byte is: a key, a value, between tokens, a truncated sequence, an encoded surrogate', async () => {
    await restoreSeed();
    const bodies = [
      [...Buffer.from('{"pass'), 0xff, ...Buffer.from(`word":"${STRONG_PASSWORD}"}`)],
      [...Buffer.from(`{"password":"${STRONG_PASSWORD}"`), 0xc0, 0xaf, ...Buffer.from('}')],
      [...Buffer.from(`{"password":"${STRONG_PASSWORD}`), 0xe2, 0x82, ...Buffer.from('"}')],
      [...Buffer.from(`{"password":"${STRONG_PASSWORD}`), 0xed, 0xa0, 0x80, ...Buffer.from('"}')],
      [...Buffer.from(`{"password":"${STRONG_PASSWORD}`), 0xf4, 0x90, 0x80, 0x80, ...Buffer.from('"}')],
    ];
    for (const body of bodies) {
      const res = await send(`/users/${USERS.totp}/verify-password`, Uint8Array.from(body));
      expect(await res.text()).toBe('{"error":"INVALID_DATA"}');
    }
  });

  test('a path resource that does not exist is still NOT_FOUND first (API.md §1 order)', async () => {
    const res = await send('/users/nosuchuser2222222222222/verify-password', latin1('{"password":"p\xffssw\x80rd long enough"}'));
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('{"error":"NOT_FOUND"}');
  });

  test('an endpoint that takes no fields still ignores its body', async () => {
    await restoreSeed();
    const res = await send(`/users/${USERS.bare}/regenerate-recovery-code`, Uint8Array.from([0xff, 0xfe, 0x00]));
    expect(res.status).toBe(200);
  });

  test('a UTF-8 byte order mark is not an error', async () => {
    await restoreSeed();
    const res = await send(`/users/${USERS.totp}/verify-password`, Buffer.from(`\uFEFF{"password":"${STRONG_PASSWORD}"}`));
    expect(res.status).toBe(204);
  });
});
