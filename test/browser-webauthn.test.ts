import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { dirname, join } from 'node:path';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { ensureChromium, WebAuthnBrowser } from './support/browser-webauthn';
import { reportSkipped } from './support/debian-packages';

// Proves the browser harness: a real Chromium with the virtual authenticator runs both ceremonies
// against a tiny relying party built straight on @simplewebauthn/server (no Gatehouse code).
const availability = await ensureChromium();
const skip = reportSkipped('browser WebAuthn', availability);

const BROWSER_BUNDLE = join(dirname(Bun.resolveSync('@simplewebauthn/browser', import.meta.dir)), '../dist/bundle/index.umd.min.js');

// Each step fetches options, runs the ceremony, and relays the browser's JSON back. `lib` uses
// @simplewebauthn/browser; `native` uses the JSON helpers browsers have had since 2025.
const PAGE = `<!doctype html><meta charset="utf-8"><title>passkeys</title>
<script src="/simplewebauthn-browser.js"></script>
<script>
async function post(path, body) {
  const reply = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await reply.json();
  if (!reply.ok) throw new Error(json.error);
  return json;
}
const create = {
  lib: (options) => SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options }),
  native: async (options) => (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })).toJSON(),
};
const get = {
  lib: (options) => SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options }),
  native: async (options) => (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })).toJSON(),
};
async function register(way, user_id) {
  const { challenge_id, options } = await post('/registration-options', { user_id });
  return post('/registration', { challenge_id, response: await create[way](options) });
}
async function login(way, user_id) {
  const { challenge_id, options } = await post('/authentication-options', { user_id });
  return post('/authentication', { challenge_id, response: await get[way](options) });
}
</script>`;

/** The relying party: challenges by id, credentials by id, all in memory. */
function relyingParty() {
  const challenges = new Map<string, { challenge: string; userId?: string }>();
  const credentials = new Map<string, WebAuthnCredential & { userId: string }>();
  let origin = '';
  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const routes: Record<string, (body: any) => Promise<Response>> = {
    async '/registration-options'({ user_id }) {
      const options = await generateRegistrationOptions({
        rpName: 'Browser test',
        rpID: 'localhost',
        userID: new TextEncoder().encode(user_id),
        userName: user_id,
        attestationType: 'none',
        excludeCredentials: [...credentials.values()].filter((c) => c.userId === user_id).map((c) => ({ id: c.id, transports: c.transports as never })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        supportedAlgorithmIDs: [-7, -257],
      });
      const id = crypto.randomUUID();
      challenges.set(id, { challenge: options.challenge, userId: user_id });
      return json({ challenge_id: id, options });
    },
    async '/registration'({ challenge_id, response }) {
      const challenge = challenges.get(challenge_id);
      challenges.delete(challenge_id);
      if (!challenge?.userId) return json({ error: 'INVALID_REQUEST' }, 400);
      const { registrationInfo } = await verifyRegistrationResponse({ response, expectedChallenge: challenge.challenge, expectedOrigin: [origin], expectedRPID: 'localhost' });
      if (!registrationInfo) return json({ error: 'PASSKEY_VERIFICATION_FAILED' }, 400);
      credentials.set(registrationInfo.credential.id, { ...registrationInfo.credential, userId: challenge.userId });
      const { credential, aaguid, credentialDeviceType, credentialBackedUp, userVerified } = registrationInfo;
      return json({ credential_id: credential.id, counter: credential.counter, transports: credential.transports, aaguid, credentialDeviceType, credentialBackedUp, userVerified });
    },
    async '/authentication-options'({ user_id }) {
      const allow = [...credentials.values()].filter((c) => c.userId === user_id).map((c) => ({ id: c.id, transports: c.transports as never }));
      const options = await generateAuthenticationOptions({ rpID: 'localhost', userVerification: 'required', allowCredentials: user_id ? allow : undefined });
      const id = crypto.randomUUID();
      challenges.set(id, { challenge: options.challenge, userId: user_id });
      return json({ challenge_id: id, options });
    },
    async '/authentication'({ challenge_id, response }) {
      const challenge = challenges.get(challenge_id);
      challenges.delete(challenge_id);
      const credential = credentials.get(response?.id);
      if (!challenge || !credential) return json({ error: 'INVALID_REQUEST' }, 400);
      const { verified, authenticationInfo } = await verifyAuthenticationResponse({ response, expectedChallenge: challenge.challenge, expectedOrigin: [origin], expectedRPID: 'localhost', credential });
      if (!verified) return json({ error: 'PASSKEY_VERIFICATION_FAILED' }, 400);
      credential.counter = authenticationInfo.newCounter;
      const userHandle = response.response.userHandle ? isoBase64URL.toUTF8String(response.response.userHandle) : undefined;
      return json({ user_id: credential.userId, user_handle: userHandle, new_counter: authenticationInfo.newCounter, allow_credentials: challenge.userId !== undefined });
    },
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const { pathname } = new URL(request.url);
      if (pathname === '/') return new Response(PAGE, { headers: { 'content-type': 'text/html' } });
      if (pathname === '/simplewebauthn-browser.js') return new Response(Bun.file(BROWSER_BUNDLE), { headers: { 'content-type': 'text/javascript' } });
      const route = routes[pathname];
      if (!route || request.method !== 'POST') return json({ error: 'NOT_FOUND' }, 404);
      try {
        return await route(await request.json());
      } catch (error) {
        return json({ error: (error as Error).message }, 400);
      }
    },
  });
  origin = `http://localhost:${server.port}`;
  return { server, origin, credentials };
}

describe.skipIf(skip)('browser WebAuthn harness', () => {
  let rp: ReturnType<typeof relyingParty>;
  let browser: WebAuthnBrowser;

  beforeAll(async () => {
    rp = relyingParty();
    const started = performance.now();
    browser = await WebAuthnBrowser.launch();
    console.log(`chromium launched in ${Math.round(performance.now() - started)} ms`);
  });

  afterAll(async () => {
    await browser?.close();
    rp?.server.stop(true);
  });

  for (const way of ['lib', 'native'] as const) {
    test(`${way}: register, log in without a user (discoverable), log in with allowCredentials`, async () => {
      const started = performance.now();
      const userId = `user-${way}-${crypto.randomUUID().slice(0, 8)}`;
      const tab = await browser.open(`${rp.origin}/`);
      expect(await tab.page.evaluate('isSecureContext')).toBe(true);

      const registered = await tab.call('register', way, userId);
      expect(registered).toMatchObject({ transports: ['internal'], credentialDeviceType: 'singleDevice', credentialBackedUp: false, userVerified: true });
      const [held] = await tab.credentials();
      // The virtual authenticator counts the registration too: it answers with 1, then 2, 3 for logins.
      expect(registered.counter).toBe(1);
      // Chromium's virtual authenticator names itself with a fixed, made-up AAGUID.
      expect(registered.aaguid).toBe('01020304-0506-0708-0102-030405060708');
      expect(held).toMatchObject({ credentialId: registered.credential_id, isResidentCredential: true, rpId: 'localhost', signCount: 1 });
      expect(held!.userHandle).toBe(isoBase64URL.fromUTF8String(userId));

      const discoverable = await tab.call('login', way);
      expect(discoverable).toEqual({ user_id: userId, user_handle: userId, new_counter: 2, allow_credentials: false });
      const listed = await tab.call('login', way, userId);
      expect(listed).toEqual({ user_id: userId, user_handle: userId, new_counter: 3, allow_credentials: true });
      expect((await tab.credentials())[0]!.signCount).toBe(3);

      // excludeCredentials: the browser itself refuses a second passkey on the same authenticator.
      const again = await tab.failure('register', way, userId);
      expect(again).toStartWith('InvalidStateError');
      console.log(`${way}: excludeCredentials → ${again}`);

      // The user fails the biometric check: the virtual authenticator then refuses the ceremony.
      await tab.setUserVerified(false);
      const unverified = await tab.failure('login', way);
      expect(unverified).toStartWith('NotAllowedError');
      console.log(`${way}: user not verified → ${unverified}`);

      await tab.close();
      console.log(`${way}: page + 5 ceremonies in ${Math.round(performance.now() - started)} ms`);
    }, 60_000);
  }
});
