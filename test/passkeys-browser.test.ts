import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ensureChromium, WebAuthnBrowser } from './support/browser-webauthn';
import { reportSkipped } from './support/debian-packages';
import { startServer, tempDirsOfThisFile, type ServerProcess } from './support/server-process';

/**
 * End to end (API.md §13): Debian Chromium with the DevTools virtual authenticator, on a page served
 * by this test from http://localhost, against the real Gatehouse process. Like a real application,
 * the page talks only to its own backend (a tiny relay here with a session cookie), which calls
 * Gatehouse with the secret; the page never sees it. The page uses plain navigator.credentials with
 * the browser's JSON helpers, as docs/integrating.md shows.
 */
const availability = await ensureChromium();
const skip = reportSkipped('passkeys in a real browser', availability);
const tempDir = tempDirsOfThisFile();
const SECRET = 'browser-test-secret-0123456789';
const PASSWORD = 'a long browser test password';

const PAGE = `<!doctype html><meta charset="utf-8"><title>app</title>
<script>
async function post(path, body = {}) {
  const reply = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await reply.text();
  const json = text === '' ? null : JSON.parse(text);
  if (!reply.ok) throw new Error(json.error);
  return json;
}
async function created(options) {
  return (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })).toJSON();
}
async function asserted(options) {
  return (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })).toJSON();
}
// Top-level functions, not consts: the test calls them as properties of the page's global object.
function signUp(email, password) { return post('/app/signup', { email, password }); }
function me() { return fetch('/app/me').then((reply) => (reply.ok ? reply.json() : null)); }
function logOut() { return post('/app/logout'); }
async function addPasskey() {
  const { challenge_id, options } = await post('/app/passkeys/options');
  return post('/app/passkeys', { challenge_id, response: await created(options) });
}
async function passkeyLogin() {
  const { challenge_id, options } = await post('/app/passkey-login/options');
  return post('/app/passkey-login', { challenge_id, response: await asserted(options) });
}
async function passwordThenPasskey(email, password) {
  const step = await post('/app/password-login', { email, password });
  const { challenge_id, options } = await post('/app/second-factor/options');
  return { step, done: await post('/app/second-factor', { challenge_id, response: await asserted(options) }) };
}
</script>`;

/** The application's backend: sessions in a cookie, every Gatehouse call made here with the secret. */
function appBackend(gatehouse: () => ServerProcess) {
  const sessions = new Map<string, { userId: string; complete: boolean }>();
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => Response.json(body, { status, headers });
  const call = async (path: string, body?: unknown) => {
    const reply = await gatehouse().request('POST', path, body);
    return { status: reply.status, body: (reply.status === 204 ? null : await reply.json()) as any };
  };
  const startSession = (userId: string, complete: boolean) => {
    const token = crypto.randomUUID();
    sessions.set(token, { userId, complete });
    return { 'set-cookie': `sid=${token}; HttpOnly; SameSite=Strict; Path=/` };
  };
  const relay = (reply: { status: number; body: any }, headers?: Record<string, string>) => json(reply.body ?? {}, reply.status, headers);

  return Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request, server) {
      const path = new URL(request.url).pathname;
      if (path === '/') return new Response(PAGE, { headers: { 'content-type': 'text/html' } });
      const token = /sid=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1] ?? '';
      const session = sessions.get(token);
      const signedIn = session?.complete ? session.userId : undefined;
      const body: any = request.method === 'POST' ? await request.json() : {};
      const clientIp = server.requestIP(request)?.address;
      switch (path) {
        case '/app/signup': {
          const reply = await call('/users', { email: body.email, password: body.password });
          return reply.status === 200 ? relay(reply, startSession(reply.body.id, true)) : relay(reply);
        }
        case '/app/me':
          return signedIn ? relay(await gatehouse().request('GET', `/users/${signedIn}`).then(async (r) => ({ status: r.status, body: await r.json() }))) : json({ error: 'signed out' }, 401);
        case '/app/logout':
          sessions.delete(token);
          return json({}, 200, { 'set-cookie': 'sid=; Max-Age=0; Path=/' });
        case '/app/passkeys/options':
          return signedIn ? relay(await call(`/users/${signedIn}/passkey-registration-options`, {})) : json({ error: 'signed out' }, 401);
        case '/app/passkeys':
          return signedIn ? relay(await call(`/users/${signedIn}/passkeys`, body)) : json({ error: 'signed out' }, 401);
        case '/app/passkey-login/options':
          return relay(await call('/passkey-authentication-options', { client_ip: clientIp }));
        case '/app/passkey-login': {
          const reply = await call('/authenticate/passkey', { ...body, client_ip: clientIp });
          return reply.status === 200 ? relay(reply, startSession(reply.body.id, true)) : relay(reply);
        }
        case '/app/password-login': {
          const reply = await call('/authenticate/password', { email: body.email, password: body.password, client_ip: clientIp });
          // A user with a passkey must also pass it: the session stays incomplete until then.
          const complete = reply.status === 200 && reply.body.passkey_count === 0;
          return reply.status === 200 ? json({ second_factor: !complete }, 200, startSession(reply.body.id, complete)) : relay(reply);
        }
        case '/app/second-factor/options':
          return session ? relay(await call('/passkey-authentication-options', { user_id: session.userId, purpose: 'second_factor' })) : json({ error: 'signed out' }, 401);
        case '/app/second-factor': {
          if (!session) return json({ error: 'signed out' }, 401);
          const reply = await call(`/users/${session.userId}/verify-2fa/passkey`, body);
          if (reply.status === 204) session.complete = true;
          return relay(reply);
        }
      }
      return json({ error: 'NOT_FOUND' }, 404);
    },
  });
}

describe.skipIf(skip)('passkeys in a real browser against the Gatehouse process', () => {
  let gatehouse: ServerProcess;
  let app: ReturnType<typeof appBackend>;
  let browser: WebAuthnBrowser;
  let origin: string;

  beforeAll(async () => {
    app = appBackend(() => gatehouse);
    origin = `http://localhost:${app.port}`;
    const flags = ['--secret', SECRET, '--webauthn-rp-id', 'localhost', '--webauthn-rp-name', 'Browser test', '--webauthn-origin', origin];
    [gatehouse, browser] = await Promise.all([startServer({ dir: tempDir(), extraArgs: flags }), WebAuthnBrowser.launch()]);
  });

  afterAll(async () => {
    await browser?.close();
    app?.stop(true);
    await gatehouse?.stop();
  });

  test('register, log out, log in with the passkey alone, then a password login with the passkey as second factor', async () => {
    const tab = await browser.open(`${origin}/`);
    const user = await tab.call('signUp', 'ada@example.com', PASSWORD);
    expect(await tab.call('me')).toMatchObject({ id: user.id, passkey_count: 0 });

    const passkey = await tab.call('addPasskey');
    expect(passkey).toMatchObject({ user_id: user.id, name: 'Passkey', last_used_at: null, backed_up: false, transports: ['internal'] });
    const [held] = await tab.credentials();
    expect(held).toMatchObject({ isResidentCredential: true, rpId: 'localhost', signCount: 1 });
    expect(Buffer.from(held!.userHandle!, 'base64url').toString()).toBe(user.id);

    await tab.call('logOut');
    expect(await tab.call('me')).toBeNull();
    const loggedIn = await tab.call('passkeyLogin');
    expect(loggedIn).toMatchObject({ id: user.id, email: 'ada@example.com', passkey_count: 1 });
    expect(await tab.call('me')).toMatchObject({ id: user.id });

    await tab.call('logOut');
    const { step } = await tab.call('passwordThenPasskey', 'ada@example.com', PASSWORD);
    expect(step).toEqual({ second_factor: true });
    expect(await tab.call('me')).toMatchObject({ id: user.id });

    const listed = (await (await gatehouse.request('GET', `/users/${user.id}/passkeys`)).json()) as { last_used_at: number | null }[];
    expect(listed).toHaveLength(1);
    expect(listed[0]!.last_used_at).toBeNumber();
    expect((await tab.credentials())[0]!.signCount).toBe(3);

    // The browser refuses on its own a second passkey on the same authenticator (excludeCredentials).
    expect(await tab.failure('addPasskey')).toStartWith('InvalidStateError');
    // A deleted passkey no longer logs in, and Gatehouse says why in the one way it answers.
    expect((await gatehouse.request('DELETE', `/users/${user.id}/passkeys/${passkey.id}`)).status).toBe(204);
    await tab.call('logOut');
    expect(await tab.failure('passkeyLogin')).toBe('Error: PASSKEY_VERIFICATION_FAILED');
    await tab.close();
  }, 60_000);
});
