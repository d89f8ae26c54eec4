import { describe, expect, spyOn, test } from 'bun:test';
import { Secret, TOTP } from 'otpauth';
import { createGatehouseClient, GatehouseRequestError, OPERATIONS, type GatehouseClient, type OperationId } from '../client/src/index';
import { SECRET, STRONG_PASSWORD } from './support/harness';
import { passkeyHarness, softAuthenticator } from './support/passkeys';

/**
 * @gatehouse/client against the real request path of Gatehouse (API.md §16), on whichever storage
 * GATEHOUSE_TEST_SETUP names: `bun run test` runs this file on SQLite, PostgreSQL and two PostgreSQL
 * instances taking turns. The client's fetch is the server's own handler, so every byte goes through
 * the credential check, the parser, validation and the stores.
 */
const h = passkeyHarness();
const inProcess = (url: string, init?: RequestInit) => h.handle(new Request(url, init));
const succeeded = new Set<OperationId>();

/** Every method of the client, counting the operations that answered a success. */
function recording(client: GatehouseClient): GatehouseClient {
  return new Proxy(client, {
    get(target, id: OperationId) {
      const method = target[id] as (input?: unknown) => Promise<{ error: unknown }>;
      return async (input?: unknown) => {
        const result = await method(input);
        if (result.error === null) succeeded.add(id);
        return result;
      };
    },
  });
}
const gatehouse = recording(createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: inProcess as typeof fetch }));

/** The data of a success, or a failed test naming the error. */
async function ok<R extends { data: unknown; error: { status: number; code: string } | null }>(result: Promise<R>): Promise<Extract<R, { error: null }>['data']> {
  const settled = await result;
  if (settled.error !== null) throw new Error(`expected a success, got ${settled.error.status} ${settled.error.code}`);
  return settled.data as Extract<R, { error: null }>['data'];
}

const totpCode = (key: string, ms: number) => TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(Buffer.from(key, 'base64')).buffer }), timestamp: ms });
const KEY = Buffer.alloc(20, 7).toString('base64');

describe('every operation through @gatehouse/client', () => {
  let users = 0;
  /** A user of the test's own, so that no test depends on what another did. */
  const newUser = async () => {
    const created = await ok(gatehouse.createUser({ password: STRONG_PASSWORD, email: `user${++users}@example.com` }));
    return { id: created.id, email: created.email! };
  };

  test('service, users and passwords', async () => {
    expect((await ok(gatehouse.getServiceInfo())).name).toBe('gatehouse');
    expect(await ok(gatehouse.getHealth())).toEqual({ status: 'ok' });
    const created = await ok(gatehouse.createUser({ password: STRONG_PASSWORD, email: 'Ada@Example.com', client_ip: '203.0.113.7' }));
    const userId = created.id;
    expect(created.recovery_code).toHaveLength(16);
    expect(created.email).toBe('ada@example.com');
    expect((await ok(gatehouse.listUsers({ email_query: 'ada', per_page: 10, sort_order: 'descending' }))).map((u) => u.id)).toEqual([userId]);
    expect((await ok(gatehouse.getUser({ id: userId }))).email_verified).toBe(false);
    expect((await ok(gatehouse.authenticateWithPassword({ email: 'ada@example.com', password: STRONG_PASSWORD }))).id).toBe(userId);
    expect(await ok(gatehouse.verifyUserPassword({ id: userId, password: STRONG_PASSWORD }))).toBeNull();
    expect(await ok(gatehouse.updateUserPassword({ id: userId, password: STRONG_PASSWORD, new_password: `${STRONG_PASSWORD}!` }))).toBeNull();
    const wrong = await gatehouse.verifyUserPassword({ id: userId, password: STRONG_PASSWORD });
    expect(wrong).toEqual({ data: null, error: { status: 400, code: 'INCORRECT_PASSWORD' } });
  });

  test('disabling and enabling, and finding a user by its address', async () => {
    const { id: userId, email } = await newUser();
    const until = Math.floor(h.now() / 1000) + 3600;
    expect(await ok(gatehouse.disableUser({ id: userId, until }))).toMatchObject({ id: userId, disabled: true, disabled_until: until });
    const refused = await gatehouse.authenticateWithPassword({ email, password: STRONG_PASSWORD });
    expect(refused.error).toEqual({ status: 400, code: 'USER_DISABLED' });
    expect(await ok(gatehouse.enableUser({ id: userId }))).toMatchObject({ id: userId, disabled: false, disabled_until: null });
    expect((await ok(gatehouse.listUsers({ email: email.toUpperCase() }))).map((u) => u.id)).toEqual([userId]);
  });

  test('email verification and email update', async () => {
    const { id: userId } = await newUser();
    const request = await ok(gatehouse.createEmailVerificationRequest({ id: userId }));
    expect((await ok(gatehouse.getEmailVerificationRequest({ id: userId }))).expires_at).toBe(request.expires_at);
    expect(await ok(gatehouse.verifyEmail({ id: userId, code: request.code.toLowerCase() }))).toBeNull();
    await ok(gatehouse.createEmailVerificationRequest({ id: userId }));
    expect(await ok(gatehouse.deleteEmailVerificationRequest({ id: userId }))).toBeNull();
    expect((await gatehouse.getEmailVerificationRequest({ id: userId })).error).toEqual({ status: 404, code: 'NOT_FOUND' });

    const update = await ok(gatehouse.createEmailUpdateRequest({ id: userId, email: 'ada.lovelace@example.com' }));
    expect((await ok(gatehouse.listEmailUpdateRequests({ id: userId }))).map((r) => r.id)).toEqual([update.id]);
    expect((await ok(gatehouse.getEmailUpdateRequest({ id: update.id }))).email).toBe('ada.lovelace@example.com');
    expect(await ok(gatehouse.verifyNewEmail({ request_id: update.id, code: update.code }))).toEqual({ email: 'ada.lovelace@example.com' });
    const second = await ok(gatehouse.createEmailUpdateRequest({ id: userId, email: 'ada@example.org' }));
    expect(await ok(gatehouse.deleteEmailUpdateRequest({ id: second.id }))).toBeNull();
    await ok(gatehouse.createEmailUpdateRequest({ id: userId, email: 'ada@example.net' }));
    expect(await ok(gatehouse.deleteEmailUpdateRequests({ id: userId }))).toBeNull();
    expect(await ok(gatehouse.listEmailUpdateRequests({ id: userId }))).toEqual([]);
  });

  test('TOTP and the recovery code', async () => {
    const { id: userId } = await newUser();
    const credential = await ok(gatehouse.registerTotp({ id: userId, key: KEY, code: totpCode(KEY, h.now()) }));
    expect(credential.key).toBe(KEY);
    expect((await ok(gatehouse.getTotpCredential({ id: userId }))).user_id).toBe(userId);
    h.advance(30_000);
    expect(await ok(gatehouse.verifyTotp({ id: userId, code: totpCode(KEY, h.now()) }))).toBeNull();
    expect(await ok(gatehouse.deleteTotpCredential({ id: userId }))).toBeNull();
    const { recovery_code } = await ok(gatehouse.regenerateRecoveryCode({ id: userId }));
    const reset = await ok(gatehouse.resetSecondFactors({ id: userId, recovery_code }));
    expect(reset.recovery_code).not.toBe(recovery_code);
  });

  test('password reset', async () => {
    const { id: userId } = await newUser();
    const request = await ok(gatehouse.createPasswordResetRequest({ id: userId, client_ip: '203.0.113.7' }));
    expect((await ok(gatehouse.listPasswordResetRequests({ id: userId }))).map((r) => r.id)).toEqual([request.id]);
    expect((await ok(gatehouse.getPasswordResetRequest({ id: request.id }))).user_id).toBe(userId);
    expect(await ok(gatehouse.verifyPasswordResetEmail({ id: request.id, code: request.code }))).toBeNull();
    expect(await ok(gatehouse.resetPassword({ request_id: request.id, password: STRONG_PASSWORD }))).toBeNull();
    const another = await ok(gatehouse.createPasswordResetRequest({ id: userId }));
    expect(await ok(gatehouse.invalidatePasswordResetRequest({ id: another.id }))).toBeNull();
    await ok(gatehouse.createPasswordResetRequest({ id: userId }));
    expect(await ok(gatehouse.invalidatePasswordResetRequests({ id: userId }))).toBeNull();
    expect(await ok(gatehouse.listPasswordResetRequests({ id: userId }))).toEqual([]);
    // Three creations in 15 minutes are the limit; support may clear it.
    expect((await gatehouse.createPasswordResetRequest({ id: userId })).error).toMatchObject({ status: 400, code: 'TOO_MANY_REQUESTS' });
    expect(await ok(gatehouse.clearUserLockouts({ id: userId }))).toBeNull();
    await ok(gatehouse.createPasswordResetRequest({ id: userId }));
  });

  test("clearing an address's limits", async () => {
    const { id: userId } = await newUser();
    const client_ip = '198.51.100.77';
    let last;
    for (let i = 0; i < 6; i++) last = await gatehouse.verifyUserPassword({ id: userId, password: 'not the password', client_ip });
    expect(last!.error).toMatchObject({ status: 400, code: 'TOO_MANY_REQUESTS' });
    expect(await ok(gatehouse.clearAddressLimits({ client_ip }))).toBeNull();
    expect((await gatehouse.verifyUserPassword({ id: userId, password: 'not the password', client_ip })).error).toEqual({ status: 400, code: 'INCORRECT_PASSWORD' });
  });

  test('sign in with an emailed code', async () => {
    const { id: userId } = await newUser();
    const { email } = await ok(gatehouse.getUser({ id: userId }));
    const request = await ok(gatehouse.createEmailSignInRequest({ email: email!, client_ip: '203.0.113.7' }));
    expect((await ok(gatehouse.listEmailSignInRequests({ id: userId }))).map((r) => r.id)).toEqual([request.id]);
    expect((await ok(gatehouse.authenticateWithEmailCode({ request_id: request.id, code: request.code }))).id).toBe(userId);
    expect((await gatehouse.authenticateWithEmailCode({ request_id: request.id, code: request.code })).error).toEqual({ status: 400, code: 'INVALID_REQUEST' });
    await ok(gatehouse.createEmailSignInRequest({ email: email! }));
    expect(await ok(gatehouse.deleteEmailSignInRequests({ id: userId }))).toBeNull();
    expect(await ok(gatehouse.listEmailSignInRequests({ id: userId }))).toEqual([]);
  });

  test('passkeys', async () => {
    const { id: userId } = await newUser();
    const authenticator = softAuthenticator();
    const registration = await ok(gatehouse.createPasskeyRegistrationOptions({ id: userId }));
    const passkey = await ok(
      gatehouse.registerPasskey({ id: userId, challenge_id: registration.challenge_id, response: await authenticator.register(registration.options as never), name: 'Work laptop' }),
    );
    expect((await ok(gatehouse.listPasskeys({ id: userId }))).map((p) => p.name)).toEqual(['Work laptop']);
    const login = await ok(gatehouse.createPasskeyAuthenticationOptions());
    const loggedIn = await ok(gatehouse.authenticateWithPasskey({ challenge_id: login.challenge_id, response: (await authenticator.authenticate(login.options as never)) as never }));
    expect(loggedIn.id).toBe(userId);
    const factor = await ok(gatehouse.createPasskeyAuthenticationOptions({ user_id: userId, purpose: 'second_factor' }));
    expect(await ok(gatehouse.verifyPasskey({ id: userId, challenge_id: factor.challenge_id, response: (await authenticator.authenticate(factor.options as never)) as never }))).toBeNull();
    expect((await ok(gatehouse.renamePasskey({ id: userId, passkey_id: passkey.id, name: 'Phone' }))).name).toBe('Phone');
    expect(await ok(gatehouse.deletePasskey({ id: userId, passkey_id: passkey.id }))).toBeNull();
  });

  test('API keys for end users', async () => {
    const { id: userId } = await newUser();
    const created = await ok(gatehouse.createApiKey({ id: userId, name: 'ci script', scopes: ['repo:read'] }));
    expect(created.key.startsWith(`gh_${created.id}_`)).toBe(true);
    expect((await ok(gatehouse.listApiKeys({ id: userId }))).map((k) => k.name)).toEqual(['ci script']);
    const verified = await ok(gatehouse.verifyApiKey({ key: created.key, scopes: ['repo:read'] }));
    expect({ key: verified.api_key.id, user: verified.user.id }).toEqual({ key: created.id, user: userId });
    expect(await gatehouse.verifyApiKey({ key: created.key, scopes: ['repo:write'] })).toEqual({ data: null, error: { status: 400, code: 'INSUFFICIENT_SCOPE' } });
    expect(await ok(gatehouse.deleteApiKey({ id: userId, key_id: created.id }))).toBeNull();
    expect(await gatehouse.verifyApiKey({ key: created.key })).toEqual({ data: null, error: { status: 400, code: 'INVALID_API_KEY' } });
    await ok(gatehouse.createApiKey({ id: userId, name: 'second' }));
    expect(await ok(gatehouse.deleteApiKeys({ id: userId }))).toBeNull();
    expect(await ok(gatehouse.listApiKeys({ id: userId }))).toEqual([]);
  });

  test('events, metrics, and deleting the user', async () => {
    const { id: userId } = await newUser();
    await ok(gatehouse.disableUser({ id: userId }));
    const events = await ok(gatehouse.listEvents({ user_id: userId, limit: 1000 }));
    expect(events.map((e) => e.type)).toEqual(['user.created', 'user.disabled']);
    const after = events.at(-1)!.id;
    expect(await ok(gatehouse.listEvents({ after, type: 'user.created' }))).toEqual([]);
    expect(await ok(gatehouse.getMetrics())).toContain('gatehouse_http_requests_total');
    expect(await ok(gatehouse.deleteUser({ id: userId }))).toBeNull();
    expect(await gatehouse.getUser({ id: userId })).toEqual({ data: null, error: { status: 404, code: 'NOT_FOUND' } });
  });

  test('every operation of the document answered a success through its method', () => {
    expect([...succeeded].sort()).toEqual((Object.keys(OPERATIONS) as OperationId[]).sort());
  });
});

describe('answers and errors', () => {
  test('INVALID_DATA for a body the document refuses, and path ids are encoded, never read as another route', async () => {
    expect((await gatehouse.createUser({ password: 'short' })).error).toEqual({ status: 400, code: 'INVALID_DATA' });
    expect((await gatehouse.getUser({ id: '../users?x=1' })).error).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect((await gatehouse.deleteUser({ id: 'a/b' })).error).toEqual({ status: 404, code: 'NOT_FOUND' });
  });

  test('TOO_MANY_REQUESTS carries retryAfter in seconds', async () => {
    const user = await ok(gatehouse.createUser({ password: STRONG_PASSWORD }));
    let last;
    for (let i = 0; i < 12; i++) last = await gatehouse.verifyUserPassword({ id: user.id, password: 'not the password', client_ip: '198.51.100.9' });
    expect(last!.error).toMatchObject({ status: 400, code: 'TOO_MANY_REQUESTS' });
    expect(last!.error!.retryAfter).toBeGreaterThanOrEqual(1);
  });

  test('a wrong secret is NOT_AUTHENTICATED, and the secret appears in no error, log or property of the client', async () => {
    const printed: string[] = [];
    const saved = { log: console.log, warn: console.warn, error: console.error, info: console.info, debug: console.debug };
    for (const name of Object.keys(saved) as (keyof typeof saved)[]) console[name] = (...args: unknown[]) => void printed.push(args.map(String).join(' '));
    try {
      const secret = 'a-wrong-secret-0123456789';
      const wrong = createGatehouseClient({ url: 'http://localhost', secret, fetch: inProcess as typeof fetch });
      expect((await wrong.getUser({ id: 'x' })).error).toEqual({ status: 401, code: 'NOT_AUTHENTICATED' });
      const down = createGatehouseClient({ url: 'http://localhost', secret, retries: 0, fetch: (async () => { throw new TypeError('connection refused'); }) as never });
      const failure = await down.getHealth().catch((e: unknown) => e as GatehouseRequestError);
      expect(failure).toBeInstanceOf(GatehouseRequestError);
      const shown = [JSON.stringify(wrong), String(Object.keys(wrong)), String(failure), (failure as Error).stack, JSON.stringify(failure), ...printed].join('\n');
      expect(shown).not.toContain(secret);
    } finally {
      Object.assign(console, saved);
    }
  });
});

describe('timeouts and retries', () => {
  /** A fetch that fails (throws or answers 503) the first `failures` times, then asks the server. */
  function flaky(failures: number, how: 'throw' | 'unavailable') {
    const calls: string[] = [];
    const fetcher = async (url: string, init: RequestInit) => {
      calls.push(String(init.method));
      if (calls.length > failures) return inProcess(url, init);
      if (how === 'throw') throw new TypeError('fetch failed');
      return new Response('{"error":"UNAVAILABLE"}', { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '0' } });
    };
    return { calls, fetch: fetcher as unknown as typeof fetch };
  }

  test('GET and DELETE are retried after a network failure and after 503 (the waits: the next test)', async () => {
    for (const how of ['throw', 'unavailable'] as const) {
      const f = flaky(2, how);
      const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: f.fetch, retries: 2 });
      expect(await ok(client.getHealth())).toEqual({ status: 'ok' });
      expect(f.calls).toEqual(['GET', 'GET', 'GET']);
      const d = flaky(1, how);
      const deleting = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: d.fetch, retries: 2 });
      expect((await deleting.deleteUser({ id: 'nobody' })).error).toEqual({ status: 404, code: 'NOT_FOUND' });
      expect(d.calls).toEqual(['DELETE', 'DELETE']);
    }
  });

  test('the waits between attempts: exponential backoff with full jitter, at least Retry-After, at most 10 s', async () => {
    // A fake clock for the client's waits: each setTimeout the client makes is recorded and fires at
    // once (anyone else's, such as a pool's or Redis link's on PostgreSQL, runs as usual); the jitter is pinned.
    const waits: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const timers = spyOn(globalThis, 'setTimeout').mockImplementation(((fire: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (!/\/client\/src\//.test(new Error().stack ?? '')) return realSetTimeout(fire, ms, ...args);
      waits.push(ms ?? 0);
      return realSetTimeout(fire, 0);
    }) as unknown as typeof setTimeout);
    const random = spyOn(Math, 'random');
    const unavailable = (retryAfter: string) => new Response('{"error":"UNAVAILABLE"}', { status: 503, headers: { 'content-type': 'application/json', 'retry-after': retryAfter } });
    /** The waits of one GET whose attempts meet `failures` in turn, then a success. */
    const waitsOf = async (failures: ('throw' | Response)[], jitter: number) => {
      random.mockReturnValue(jitter);
      const answers = [...failures];
      const fetcher = async () => {
        const next = answers.shift();
        if (next === undefined) return Response.json({ status: 'ok' });
        if (next === 'throw') throw new TypeError('fetch failed');
        return next;
      };
      const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: fetcher as unknown as typeof fetch, retries: failures.length });
      waits.length = 0;
      expect(await ok(client.getHealth())).toEqual({ status: 'ok' });
      return [...waits];
    };
    try {
      // 200 ms doubling each attempt, times the jitter.
      expect(await waitsOf(['throw', 'throw', 'throw'], 1)).toEqual([400, 800, 1600]);
      expect(await waitsOf(['throw', 'throw'], 0.25)).toEqual([100, 200]);
      expect(await waitsOf([unavailable('0'), unavailable('0')], 1)).toEqual([400, 800]);
      // Retry-After, in seconds, when it is longer than the backoff; never more than 10 s.
      expect(await waitsOf([unavailable('3')], 1)).toEqual([3000]);
      expect(await waitsOf([unavailable('3'), unavailable('1')], 0.5)).toEqual([3000, 1000]);
      expect(await waitsOf([unavailable('120')], 1)).toEqual([10_000]);
    } finally {
      timers.mockRestore();
      random.mockRestore();
    }
  });

  test('after the last retry: the 503 answered, or the network failure thrown', async () => {
    const unavailable = flaky(5, 'unavailable');
    const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: unavailable.fetch, retries: 1 });
    expect((await client.getHealth()).error).toEqual({ status: 503, code: 'UNAVAILABLE', retryAfter: 0 });
    expect(unavailable.calls).toHaveLength(2);
    const down = flaky(5, 'throw');
    const failing = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: down.fetch, retries: 1 });
    expect(await failing.getHealth().catch((e: unknown) => e)).toBeInstanceOf(GatehouseRequestError);
    expect(down.calls).toHaveLength(2);
  });

  test('POST is never retried: it may have changed something before the connection broke', async () => {
    for (const how of ['throw', 'unavailable'] as const) {
      const f = flaky(1, how);
      const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: f.fetch, retries: 3 });
      const result = await client.createUser({ password: STRONG_PASSWORD }).catch((e: unknown) => e);
      if (how === 'throw') expect(result).toBeInstanceOf(GatehouseRequestError);
      else expect(result).toEqual({ data: null, error: { status: 503, code: 'UNAVAILABLE', retryAfter: 0 } });
      expect(f.calls).toEqual(['POST']);
    }
  });

  test('each attempt is cut off after timeoutMs', async () => {
    let attempts = 0;
    const hanging = ((_: string, init: RequestInit) => {
      attempts++;
      return new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)));
    }) as unknown as typeof fetch;
    const client = createGatehouseClient({ url: 'http://localhost', secret: SECRET, fetch: hanging, timeoutMs: 50, retries: 1 });
    const failure = await client.getUser({ id: 'x' }).catch((e: unknown) => e as Error);
    expect(failure).toBeInstanceOf(GatehouseRequestError);
    expect((failure as Error).message).toContain('timed out after 50 ms');
    expect(attempts).toBe(2);
  });
});

