import { describe, expect, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { addressKey } from '../src/limits/address-key';
import { eventsDuring, summary } from './support/events';
import { expectError, STRONG_PASSWORD, type Harness } from './support/harness';
import { authenticationOptions, passkeyHarness, registered, registrationOptions, softAuthenticator } from './support/passkeys';
import { rowOf, snapshot } from './support/rows';
import { FastHasher } from './fuzz/seed';

/** API.md §14: what a disabled user may not do, where USER_DISABLED stands in the order of checks, and what it leaves alone. */

const IP = '203.0.113.9';
const NEW_PASSWORD = 'a brand new password 42';
const KEY = Buffer.from(new Uint8Array(20).map((_, i) => (i * 29 + 7) % 256)).toString('base64');
const totpAt = (ms: number) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(KEY, 'base64')).buffer }), timestamp: ms });

/** Counts verifications, and can hold them until released: the race tests decide when a check finishes. */
class WatchedHasher extends FastHasher {
  verifications = 0;
  private gate: Promise<void> | null = null;
  private open: (() => void) | null = null;
  private entered: (() => void)[] = [];
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
    this.gate = null;
  }
  /** Resolves once `n` verifications are under way. */
  whenVerifying(n: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.verifications >= n ? resolve() : this.entered.push(check));
      check();
    });
  }
  override async verify(password: string, hash: string): Promise<boolean> {
    this.verifications++;
    for (const waiter of this.entered.splice(0)) waiter();
    if (this.gate) await this.gate;
    return super.verify(password, hash);
  }
}

async function setup() {
  const hasher = new WatchedHasher();
  const h = passkeyHarness({ hasher, startMs: Date.UTC(2030, 5, 1) });
  await h.ready;
  const user = await h.createUser({ email: 'ada@example.com' });
  const authenticator = softAuthenticator();
  await registered(h, user.id, authenticator);
  expect((await h.call('POST', `/users/${user.id}/register-totp`, { body: { key: KEY, code: totpAt(h.now()) } })).status).toBe(200);
  h.advance(30_000);
  const reset = (await h.call('POST', `/users/${user.id}/password-reset-requests`)).json as { id: string; code: string };
  const verification = (await h.call('POST', `/users/${user.id}/email-verification-request`)).json as { code: string };
  const update = (await h.call('POST', `/users/${user.id}/email-update-requests`, { body: { email: 'new@example.com' } })).json as { id: string; code: string };
  const disable = () => h.call('POST', `/users/${user.id}/disable`);
  const enable = () => h.call('POST', `/users/${user.id}/enable`);
  return { h, hasher, user, authenticator, reset, verification, update, disable, enable };
}
type Setup = Awaited<ReturnType<typeof setup>>;

interface Case {
  name: string;
  /** A request that would succeed for an enabled user (correct codes and all). */
  good: (s: Setup, ip?: string) => Promise<{ status: number; json: any }>;
  /** The same request with a body that breaks a field rule. */
  bad?: (s: Setup) => Promise<{ status: number; json: any }>;
  /** Whatever `good` needs that is not the request itself (a challenge), made before the snapshot. */
  prepare?: (s: Setup) => Promise<void>;
  /** Uses the limit that follows USER_DISABLED up, so that it would refuse an enabled user. */
  exhaust?: (s: Setup) => Promise<void>;
}

const post = (h: Harness, path: string, body?: unknown) => h.call('POST', path, body === undefined ? {} : { body });
const spendAddress = async (s: Setup) => {
  for (let i = 0; i < 5; i++) await s.h.deps.limits.address.consume(addressKey(IP));
};
const lockout = (name: 'totpVerify' | 'totpRegister' | 'reset2fa' | 'emailVerify' | 'emailUpdateVerify' | 'passkeyVerify') => async (s: Setup) => {
  for (let i = 0; i < 5; i++) await s.h.deps.limits[name].recordFailure(s.user.id);
};
const window = (name: 'resetRequests' | 'emailVerificationRequests' | 'emailUpdateRequests') => async (s: Setup) => {
  for (let i = 0; i < 3; i++) await s.h.deps.limits[name].hit(s.user.id);
};

const assertions = new WeakMap<Setup, unknown>();

const LIMIT_WRITES = new Set(['consume', 'hit', 'recordFailure', 'reset', 'clear']);
/**
 * Puts a recorder in front of the harness's limits (in memory or in Redis, on every instance): every
 * call that spends or resets a limit is listed as `limit.method(key)`. The tables alone cannot show a
 * refusal that counts toward a lockout or spends a token.
 */
function recordLimitWrites(h: Harness): string[] {
  const writes: string[] = [];
  const real = h.deps.limits;
  h.deps.limits = new Proxy(real, {
    get: (target, limit: string) => {
      const inner = (target as any)[limit];
      if (typeof inner !== 'object' || inner === null) return inner;
      return new Proxy(inner, {
        get: (object, method: string) => {
          const value = object[method];
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (LIMIT_WRITES.has(method)) writes.push(`${limit}.${method}(${args.join(', ')})`);
            return value.apply(object, args);
          };
        },
      });
    },
  });
  return writes;
}

/** Every endpoint of §14's list that refuses a disabled user before the rate limits (and update-password, see the README). */
const CASES: Case[] = [
  {
    name: 'create a password reset request',
    good: (s, ip) => post(s.h, `/users/${s.user.id}/password-reset-requests`, ip ? { client_ip: ip } : {}),
    bad: (s) => post(s.h, `/users/${s.user.id}/password-reset-requests`, { client_ip: 5 }),
    exhaust: async (s) => {
      await spendAddress(s);
      await window('resetRequests')(s);
    },
  },
  {
    name: '/reset-password',
    good: (s, ip) => post(s.h, '/reset-password', { request_id: s.reset.id, password: NEW_PASSWORD, ...(ip ? { client_ip: ip } : {}) }),
    bad: (s) => post(s.h, '/reset-password', { request_id: s.reset.id, password: 'short' }),
    exhaust: spendAddress,
  },
  {
    name: 'create an email verification request',
    good: (s) => post(s.h, `/users/${s.user.id}/email-verification-request`),
    exhaust: window('emailVerificationRequests'),
  },
  {
    name: 'verify-email',
    good: (s) => post(s.h, `/users/${s.user.id}/verify-email`, { code: s.verification.code }),
    bad: (s) => post(s.h, `/users/${s.user.id}/verify-email`, { code: 'short' }),
    exhaust: lockout('emailVerify'),
  },
  {
    name: 'create an email update request',
    good: (s) => post(s.h, `/users/${s.user.id}/email-update-requests`, { email: 'other@example.com' }),
    bad: (s) => post(s.h, `/users/${s.user.id}/email-update-requests`, { email: 'not an address' }),
    exhaust: window('emailUpdateRequests'),
  },
  {
    name: '/verify-new-email',
    good: (s) => post(s.h, '/verify-new-email', { request_id: s.update.id, code: s.update.code }),
    bad: (s) => post(s.h, '/verify-new-email', { request_id: s.update.id, code: 'short' }),
    exhaust: lockout('emailUpdateVerify'),
  },
  {
    name: 'register-totp',
    good: (s) => post(s.h, `/users/${s.user.id}/register-totp`, { key: KEY, code: totpAt(s.h.now() + 30_000) }),
    bad: (s) => post(s.h, `/users/${s.user.id}/register-totp`, { key: 'AAAA', code: '123456' }),
    exhaust: lockout('totpRegister'),
  },
  {
    name: 'verify-2fa/totp',
    good: (s) => post(s.h, `/users/${s.user.id}/verify-2fa/totp`, { code: totpAt(s.h.now()) }),
    bad: (s) => post(s.h, `/users/${s.user.id}/verify-2fa/totp`, { code: '12345' }),
    exhaust: lockout('totpVerify'),
  },
  {
    name: 'reset-2fa',
    good: (s) => post(s.h, `/users/${s.user.id}/reset-2fa`, { recovery_code: s.user.recovery_code }),
    bad: (s) => post(s.h, `/users/${s.user.id}/reset-2fa`, { recovery_code: 'short' }),
    exhaust: lockout('reset2fa'),
  },
  {
    name: 'passkey registration options',
    good: (s) => post(s.h, `/users/${s.user.id}/passkey-registration-options`, {}),
    bad: (s) => post(s.h, `/users/${s.user.id}/passkey-registration-options`, { user_verification: 'never' }),
  },
  {
    name: 'verify-2fa/passkey',
    prepare: async (s) => {
      const { challenge_id, options } = await authenticationOptions(s.h, { user_id: s.user.id, purpose: 'second_factor' });
      assertions.set(s, { challenge_id, response: await s.authenticator.authenticate(options) });
    },
    good: (s) => post(s.h, `/users/${s.user.id}/verify-2fa/passkey`, assertions.get(s)),
    bad: (s) => post(s.h, `/users/${s.user.id}/verify-2fa/passkey`, { challenge_id: 5 }),
    exhaust: lockout('passkeyVerify'),
  },
  {
    name: 'update-password',
    good: (s, ip) => post(s.h, `/users/${s.user.id}/update-password`, { password: STRONG_PASSWORD, new_password: NEW_PASSWORD, ...(ip ? { client_ip: ip } : {}) }),
    bad: (s) => post(s.h, `/users/${s.user.id}/update-password`, { password: STRONG_PASSWORD, new_password: 'short' }),
    exhaust: spendAddress,
  },
];

describe('a disabled user is refused with USER_DISABLED, and nothing changes', () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const s = await setup();
      await c.prepare?.(s);
      await s.disable();
      const before = await snapshot(s.h);
      const verifications = s.hasher.verifications;
      const limitWrites = recordLimitWrites(s.h);
      expectError(await c.good(s), 400, 'USER_DISABLED');
      // No hash checked, no code or challenge used, no counter moved (in the tables or the limits), no event written.
      expect(await snapshot(s.h)).toEqual(before);
      expect(limitWrites).toEqual([]);
      expect(s.hasher.verifications).toBe(verifications);
      // After 404 and INVALID_DATA.
      if (c.bad) expectError(await c.bad(s), 400, 'INVALID_DATA');
      // Before the rate limits: exhausted ones would refuse an enabled user, but USER_DISABLED is told first.
      if (c.exhaust) {
        await c.exhaust(s);
        expectError(await c.good(s, IP), 400, 'USER_DISABLED');
        await s.enable();
        expectError(await c.good(s, IP), 400, 'TOO_MANY_REQUESTS');
      } else {
        // Enabled again, the same request works: nothing it needed was used up.
        await s.enable();
        expect((await c.good(s)).status).toBeLessThan(300);
      }
    });
  }

  test('the codes survive: once enabled, the reset, verification and update codes all still work', async () => {
    const s = await setup();
    await s.disable();
    for (const c of CASES.filter((c) => ['/reset-password', 'verify-email', '/verify-new-email'].includes(c.name))) expectError(await c.good(s), 400, 'USER_DISABLED');
    await s.enable();
    expect((await post(s.h, `/users/${s.user.id}/verify-email`, { code: s.verification.code })).status).toBe(204);
    // A verified new address invalidates the reset requests, so the reset goes first.
    expect((await post(s.h, '/reset-password', { request_id: s.reset.id, password: NEW_PASSWORD })).status).toBe(204);
    expect((await post(s.h, '/verify-new-email', { request_id: s.update.id, code: s.update.code })).json).toEqual({ email: 'new@example.com' });
  });

  test('a passkey registration started before the disable cannot finish while disabled, and its challenge stays', async () => {
    const s = await setup();
    const { challenge_id, options } = await registrationOptions(s.h, s.user.id);
    const response = await softAuthenticator().register(options);
    await s.disable();
    expectError(await post(s.h, `/users/${s.user.id}/passkeys`, { challenge_id, response }), 400, 'USER_DISABLED');
    expect(await rowOf(s.h, 'challenges', { id: challenge_id })).toBeDefined();
    await s.enable();
    expect((await post(s.h, `/users/${s.user.id}/passkeys`, { challenge_id, response })).status).toBe(200);
  });

  test('404 comes first, and on the endpoints whose request is in the body, INVALID_REQUEST', async () => {
    const s = await setup();
    await s.disable();
    expectError(await post(s.h, '/users/nobody/verify-2fa/totp', { code: 'x' }), 404, 'NOT_FOUND');
    expectError(await post(s.h, '/reset-password', { request_id: 'gone', password: NEW_PASSWORD }), 400, 'INVALID_REQUEST');
    expectError(await post(s.h, '/verify-new-email', { request_id: 'gone', code: s.update.code }), 400, 'INVALID_REQUEST');
  });

  test('still allowed: read, list, find by email, list and delete requests, regenerate the recovery code, remove credentials, delete', async () => {
    const s = await setup();
    const { h, user } = s;
    await s.disable();
    const u = `/users/${user.id}`;
    for (const [method, path] of [
      ['GET', u],
      ['GET', '/users?email=ada@example.com'],
      ['GET', `${u}/password-reset-requests`],
      ['GET', `${u}/email-verification-request`],
      ['GET', `${u}/email-update-requests`],
      ['GET', `/email-update-requests/${s.update.id}`],
      ['GET', `${u}/totp-credential`],
      ['GET', `${u}/passkeys`],
      ['POST', `${u}/regenerate-recovery-code`],
      ['DELETE', `${u}/password-reset-requests`],
      ['DELETE', `${u}/email-verification-request`],
      ['DELETE', `${u}/email-update-requests`],
      ['DELETE', `${u}/totp-credential`],
      ['DELETE', u],
    ] as const) {
      const res = await h.call(method, path);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: res.status < 300 ? res.status : 200 });
    }
  });
});

describe('the credential checks: full work first, USER_DISABLED only for a correct credential', () => {
  const verify = (s: Setup, password: string) => post(s.h, `/users/${s.user.id}/verify-password`, { password, client_ip: IP });
  const login = (s: Setup, password: string, email = 'ada@example.com') => post(s.h, '/authenticate/password', { email, password, client_ip: IP });

  for (const [name, check] of [
    ['verify-password', verify],
    ['authenticate/password', login],
  ] as const) {
    test(`${name}: a wrong password answers and counts as for an enabled user; a correct one is USER_DISABLED; each verifies the hash once`, async () => {
      const s = await setup();
      await s.disable();
      const during = (action: () => Promise<unknown>) => eventsDuring(s.h, action).then(summary);
      let verifications = s.hasher.verifications;
      const oneVerification = () => {
        expect(s.hasher.verifications).toBe(verifications + 1);
        verifications = s.hasher.verifications;
      };
      expect(await during(async () => expectError(await check(s, STRONG_PASSWORD), 400, 'USER_DISABLED'))).toEqual([]);
      oneVerification();
      for (let i = 0; i < 4; i++) {
        s.h.advance(10_000);
        expect(await during(async () => expectError(await check(s, 'not the password'), 400, 'INCORRECT_PASSWORD'))).toEqual([['password.incorrect', s.user.id, IP]]);
        oneVerification();
      }
      s.h.advance(10_000);
      expect(await during(async () => expectError(await check(s, 'not the password'), 400, 'INCORRECT_PASSWORD'))).toEqual([
        ['password.incorrect', s.user.id, IP],
        ['address.blocked', s.user.id, IP],
      ]);
      oneVerification();
      // The block comes before USER_DISABLED on a credential check: it is last.
      s.h.advance(10_000);
      expectError(await check(s, STRONG_PASSWORD), 400, 'TOO_MANY_REQUESTS');
    });
  }

  test('an enabled and a disabled user cost the same verifications, and an unknown email too', async () => {
    const s = await setup();
    const count = async (action: () => Promise<unknown>) => {
      const before = s.hasher.verifications;
      await action();
      return s.hasher.verifications - before;
    };
    const wrong = { password: 'not the password' };
    const enabled = [
      await count(() => post(s.h, `/users/${s.user.id}/verify-password`, wrong)),
      await count(() => post(s.h, '/authenticate/password', { email: 'ada@example.com', ...wrong })),
      await count(() => post(s.h, '/authenticate/password', { email: 'nobody@example.com', ...wrong })),
    ];
    await s.disable();
    const disabled = [
      await count(() => post(s.h, `/users/${s.user.id}/verify-password`, wrong)),
      await count(() => post(s.h, '/authenticate/password', { email: 'ada@example.com', ...wrong })),
      await count(() => post(s.h, `/users/${s.user.id}/verify-password`, { password: STRONG_PASSWORD })),
    ];
    expect(enabled).toEqual([1, 1, 1]);
    expect(disabled).toEqual([1, 1, 1]);
  });

  test('authenticate/passkey: a failing passkey fails as before; a correct one is USER_DISABLED and uses nothing up', async () => {
    const s = await setup();
    await s.disable();
    const during = (action: () => Promise<unknown>) => eventsDuring(s.h, action).then(summary);
    const bad = await authenticationOptions(s.h, { client_ip: IP });
    const tampered = await s.authenticator.authenticate(bad.options, { tamperSignature: true });
    expect(await during(async () => expectError(await post(s.h, '/authenticate/passkey', { challenge_id: bad.challenge_id, response: tampered, client_ip: IP }), 400, 'PASSKEY_VERIFICATION_FAILED'))).toEqual([
      ['passkey.failed', null, IP],
    ]);
    const good = await authenticationOptions(s.h, {});
    const response = await s.authenticator.authenticate(good.options);
    const passkeyBefore = await rowOf(s.h, 'passkeys', { userId: s.user.id });
    expect(await during(async () => expectError(await post(s.h, '/authenticate/passkey', { challenge_id: good.challenge_id, response }), 400, 'USER_DISABLED'))).toEqual([]);
    expect(await rowOf(s.h, 'challenges', { id: good.challenge_id })).toBeDefined();
    expect(await rowOf(s.h, 'passkeys', { userId: s.user.id })).toEqual(passkeyBefore);
    await s.enable();
    expect((await post(s.h, '/authenticate/passkey', { challenge_id: good.challenge_id, response })).json).toMatchObject({ id: s.user.id, disabled: false });
  });
});

describe('a disable racing a correct password check', () => {
  for (const [name, check] of [
    ['verify-password', (s: Setup) => post(s.h, `/users/${s.user.id}/verify-password`, { password: STRONG_PASSWORD })],
    ['authenticate/password', (s: Setup) => post(s.h, '/authenticate/password', { email: 'ada@example.com', password: STRONG_PASSWORD })],
  ] as const) {
    test(`${name}: checks whose hash was being verified when the disable answered are USER_DISABLED, never 204/200`, async () => {
      const s = await setup();
      const before = s.hasher.verifications;
      s.hasher.hold();
      // With two instances the checks and the disable alternate between them.
      const checks = Array.from({ length: 6 }, () => check(s));
      await s.hasher.whenVerifying(before + 6);
      expect((await s.disable()).status).toBe(200);
      s.hasher.release();
      for (const res of await Promise.all(checks)) expectError(res, 400, 'USER_DISABLED');
    });
  }

  test('under load: no check sent after the disable answered succeeds, and every answer is one of the two', async () => {
    const s = await setup();
    let disabledAnswered = false;
    const results: { sentAfter: boolean; status: number; error?: string }[] = [];
    const one = async () => {
      const sentAfter = disabledAnswered;
      const res = await post(s.h, `/users/${s.user.id}/verify-password`, { password: STRONG_PASSWORD });
      results.push({ sentAfter, status: res.status, error: res.json?.error });
    };
    const waves = Array.from({ length: 40 }, async (_, i) => {
      await Bun.sleep(i);
      await one();
    });
    await Bun.sleep(15);
    expect((await s.disable()).status).toBe(200);
    disabledAnswered = true;
    await Promise.all([...waves, ...Array.from({ length: 10 }, one)]);
    expect(results.filter((r) => r.sentAfter && r.status !== 400)).toEqual([]);
    for (const r of results) expect(r.status === 204 || (r.status === 400 && r.error === 'USER_DISABLED')).toBe(true);
    expect(results.filter((r) => r.sentAfter).length).toBeGreaterThanOrEqual(10);
  });
});
