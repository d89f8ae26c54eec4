// Issue 24: the guarantees of the multi-instance mode that test/contention.test.ts does not cover, on
// the same two real server processes (one PostgreSQL + Redis): each scenario sends ≥ 10 parallel
// requests alternating between them, repeated every run, with exact counts and never a 5xx.
import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { generateId } from '../src/security/random';
import { ORIGIN, RP, softAuthenticator } from './support/passkeys';
import { expectTally, ok, tally, twoProcessesForThisFile, type Answer, type TwoProcesses } from './support/two-processes';

const processes = await twoProcessesForThisFile('limits and uniqueness across two server processes', {
  extraArgs: ['--webauthn-rp-id', RP.id, '--webauthn-origin', ORIGIN],
});
const pair = (): TwoProcesses => processes.pair();
const REPEATS = 3;
const SCENARIO_MS = 240_000;
const PASSWORD = 'a long enough password 42';

const unique = () => generateId().slice(0, 10);
const createUser = async (n: number, body: Record<string, unknown> = {}) => ok(await pair().call(n, 'POST', '/users', { password: PASSWORD, ...body }), 'create user');
const count = async (query: Promise<unknown[]>) => Number(((await query)[0] as { n: number | string }).n);

describe.skipIf(processes.skip)('two server processes: limits and uniqueness under parallel requests', () => {
  test('the 10-passkey cap: with 9 registered, 10 parallel registrations → exactly one 200', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = (await createUser(round)).id as string;
      for (let i = 0; i < 9; i++) {
        const options = await ok(await pair().call(i, 'POST', `/users/${user}/passkey-registration-options`, {}), 'registration options');
        await ok(await pair().call(i + 1, 'POST', `/users/${user}/passkeys`, { challenge_id: options.challenge_id, response: await softAuthenticator().register(options.options) }), 'registration');
      }
      // Ten challenges taken while the user holds 9, each answered by a different authenticator.
      const bodies: unknown[] = [];
      for (let n = 0; n < 10; n++) {
        const options = await ok(await pair().call(n, 'POST', `/users/${user}/passkey-registration-options`, {}), 'registration options');
        bodies.push({ challenge_id: options.challenge_id, response: await softAuthenticator().register(options.options) });
      }
      const answers = await pair().parallel(10, (n) => ({ method: 'POST', path: `/users/${user}/passkeys`, body: bodies[n] }));
      expectTally(round, answers, { '200': 1, '400 NOT_ALLOWED': 9 });
      expect(await count(pair().sql`select count(*) as n from passkeys where user_id = ${user}`)).toBe(10);
    }
  }, SCENARIO_MS);

  test('20 parallel creations with one address in different cases → exactly one 200', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const local = `case-${unique()}`;
      const spell = (n: number) => (n % 3 === 0 ? `${local}@example.com` : n % 3 === 1 ? `${local.toUpperCase()}@EXAMPLE.COM` : `${local}@Example.Com`);
      const answers = await pair().parallel(20, (n) => ({ method: 'POST', path: '/users', body: { password: PASSWORD, email: spell(n) } }));
      expectTally(round, answers, { '200': 1, '400 EMAIL_ALREADY_USED': 19 });
      expect(await count(pair().sql`select count(*) as n from users where lower(email) = ${`${local}@example.com`}`)).toBe(1);
    }
  }, SCENARIO_MS);

  test('creations racing an email change to the same address → one holder, exactly one 200 among them', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const address = `raced-${unique()}@example.com`;
      const changer = (await createUser(round)).id as string;
      const request = await ok(await pair().call(round, 'POST', `/users/${changer}/email-update-requests`, { email: address }), 'update request');
      // Even n: the change (redeemed once at most); odd n: a new user with the address, in upper case.
      const answers = await pair().parallel(20, (n) =>
        n % 4 < 2
          ? { method: 'POST', path: '/verify-new-email', body: { request_id: request.id, code: request.code } }
          : { method: 'POST', path: '/users', body: { password: PASSWORD, email: address.toUpperCase() } },
      );
      const counts = tally(answers);
      expect({ round, ok: counts['200'] }).toEqual({ round, ok: 1 });
      const refusals = Object.keys(counts).filter((key) => key !== '200');
      expect({ round, refusals: refusals.filter((key) => !['400 EMAIL_ALREADY_USED', '400 INVALID_REQUEST'].includes(key)) }).toEqual({ round, refusals: [] });
      expect(await count(pair().sql`select count(*) as n from users where lower(email) = ${address}`)).toBe(1);
    }
  }, SCENARIO_MS);

  test('parallel register-totp with two keys → one credential, holding the key of an accepted request', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = (await createUser(round)).id as string;
      const keys = [0, 1].map(() => Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString('base64'));
      const codeOf = (key: string) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(key, 'base64')).buffer }) });
      // n → key (n >> 1) % 2, process n % 2: each key reaches both processes.
      const sent = Array.from({ length: 10 }, (_, n) => keys[(n >> 1) % 2]!);
      const answers = await pair().parallel(10, (n) => ({ method: 'POST', path: `/users/${user}/register-totp`, body: { key: sent[n], code: codeOf(sent[n]!) } }));
      const accepted = answers.flatMap((answer, n) => (answer.status === 200 ? [sent[n]!] : []));
      expect({ round, accepted: accepted.length > 0, errors: answers.filter((a) => a.status >= 500).map((a) => a.text) }).toEqual({ round, accepted: true, errors: [] });
      const rows = await pair().sql`select key from totp_credentials where user_id = ${user}`;
      expect(rows.length).toBe(1);
      expect(accepted).toContain(rows[0].key);
      // Both processes show the same credential, and a code of the stored key verifies (the other key's does not).
      const views = await Promise.all([0, 1].map(async (n) => (await pair().call(n, 'GET', `/users/${user}/totp-credential`)).text));
      expect(views[0]).toBe(views[1]!);
      expect(await count(pair().sql`select count(*) as n from events where user_id = ${user} and type = 'totp.registered'`)).toBe(accepted.length);
    }
  }, SCENARIO_MS);

  test('the login block across both processes: 10 parallel wrong passwords → exactly 5 counted, then both refuse', async () => {
    for (let round = 0; round < REPEATS; round++) {
      const user = (await createUser(round)).id as string;
      const ip = `198.51.100.${10 + round}`;
      const answers = await pair().parallel(10, () => ({ method: 'POST', path: `/users/${user}/verify-password`, body: { password: 'not the password 1', client_ip: ip } }));
      expectTally(round, answers, { '400 INCORRECT_PASSWORD': 5, '400 TOO_MANY_REQUESTS': 5 });
      expect(await count(pair().sql`select count(*) as n from events where user_id = ${user} and type = 'password.incorrect'`)).toBe(5);
      // The right password from that address: refused by both, for the 15-minute block (Retry-After 900).
      for (const server of pair().servers) {
        const res = await server.request('POST', `/users/${user}/verify-password`, { password: PASSWORD, client_ip: ip });
        expect({ round, status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') }).toEqual({
          round,
          status: 400,
          body: { error: 'TOO_MANY_REQUESTS' },
          retryAfter: '900',
        });
      }
    }
  }, SCENARIO_MS);
});
