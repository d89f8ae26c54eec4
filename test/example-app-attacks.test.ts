import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from 'bun:test';
import { networkInterfaces } from 'node:os';
import { Secret, TOTP } from 'otpauth';
import { createExampleApp } from '../examples/app/src/app';
import { clientAddress } from '../examples/app/src/client-ip';
import { createGatehouseClient, type GatehouseClient } from '../examples/app/src/gatehouse';
import { Mailbox } from '../examples/app/src/mailbox';
import { SessionStore } from '../examples/app/src/session';
import { ensureChromium, WebAuthnBrowser } from './support/browser-webauthn';
import { reportSkipped } from './support/debian-packages';
import { freePort } from './support/engine-process';
import { startServer, tempDirsOfThisFile, type ServerProcess } from './support/server-process';

/**
 * The example app (examples/app) under attack, over HTTP as a script would do it and in Chromium
 * where a browser is the tool: each test plays one attack from issue 35 against the app in this
 * process and a real Gatehouse process behind it, and checks that it gets nowhere.
 */
const skip = reportSkipped('the example app under attack in a real browser', await ensureChromium());
const tempDir = tempDirsOfThisFile();
const PASSWORD = 'a long example app password';
const TRUSTED_PROXY = '10.0.0.1';

let gatehouse: ServerProcess;
let admin: GatehouseClient;
let app: ReturnType<typeof createExampleApp>;
let mailbox: Mailbox;
let sessions: SessionStore;
let origin: string;
const started: { stop: () => Promise<void> }[] = [];

/** A script with a cookie jar, behind a proxy that appends the caller's address (`ip`) to X-Forwarded-For. */
class Visitor {
  private readonly cookies = new Map<string, string>();
  csrf = '';
  constructor(
    readonly ip: string,
    readonly base = origin,
  ) {}

  async send(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${this.base}${path}`, {
      method,
      redirect: 'manual',
      headers: { 'x-forwarded-for': this.ip, ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
      body: form ? new URLSearchParams({ csrf: this.csrf, ...form }).toString() : undefined,
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = pair!.split('=');
      if (/Max-Age=0\b/.test(line)) this.cookies.delete(name!);
      else this.cookies.set(name!, value.join('='));
    }
    const text = await response.text();
    const token = /<meta name="csrf-token" content="([^"]*)">/.exec(text)?.[1];
    if (token) this.csrf = token;
    return { status: response.status, location: response.headers.get('location'), text, headers: response.headers };
  }
  get = (path: string) => this.send('GET', path);
  /** Loads the page the form is on first, as a browser would, for the CSRF token. */
  async post(formPage: string, action: string, form: Record<string, string>) {
    await this.get(formPage);
    return this.send('POST', action, form);
  }
  has = (cookie: string) => this.cookies.has(cookie);
}

let addresses = 0;
const visitor = () => new Visitor(`198.51.100.${++addresses}`);
/** The text of the page's error line, or ''. */
const alert = (text: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(text)?.[1] ?? '';

async function createUser(email: string, verified = false): Promise<string> {
  const created = await admin.createUser({ email, password: PASSWORD });
  if (created.error) throw new Error(`createUser: ${created.error.code}`);
  if (verified) {
    const request = await admin.createEmailVerificationRequest({ id: created.data.id });
    if (request.error) throw new Error(request.error.code);
    expect((await admin.verifyEmail({ id: created.data.id, code: request.data.code })).error).toBeNull();
  }
  return created.data.id;
}

async function signedIn(email: string): Promise<Visitor> {
  const person = visitor();
  const answer = await person.post('/sign-in', '/sign-in/password', { email, password: PASSWORD });
  expect(answer.location).toBe('/account');
  expect((await person.get('/account')).status).toBe(200);
  return person;
}

function exampleApp(options: Partial<Parameters<typeof createExampleApp>[0]> = {}) {
  return createExampleApp({
    gatehouse: createGatehouseClient({ url: gatehouse.url, secret: gatehouse.secret }),
    mailbox: new Mailbox(),
    sessions: new SessionStore(false),
    issuer: 'Example app',
    clientIpHeader: 'x-forwarded-for',
    trustedProxies: [TRUSTED_PROXY],
    ...options,
  });
}

/** Another instance of the app on its own port, stopped after the file. */
async function listen(instance: ReturnType<typeof createExampleApp>, hostname = 'localhost'): Promise<number> {
  const port = await freePort();
  instance.listen({ port, hostname });
  started.push({ stop: async () => void (await instance.stop()) });
  return port;
}

describe.skipIf(skip)('the example app under attack', () => {
  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    gatehouse = await startServer({ dir: tempDir(), extraArgs: ['--secret', 'example-app-test-secret-0123', '--webauthn-rp-id', 'localhost', '--webauthn-rp-name', 'Example app', '--webauthn-origin', origin] });
    admin = createGatehouseClient({ url: gatehouse.url, secret: gatehouse.secret });
    mailbox = new Mailbox();
    sessions = new SessionStore(false);
    app = exampleApp({ mailbox, sessions });
    app.listen({ port });
  }, 60_000);

  afterEach(() => setSystemTime());

  afterAll(async () => {
    for (const instance of started) await instance.stop();
    await app?.stop();
    await gatehouse?.stop();
  });

  test('X-Forwarded-For: the entry the proxy added counts, not the ones the browser wrote before it', async () => {
    expect(clientAddress('203.0.113.9, 198.51.100.7', '127.0.0.1', { header: 'x-forwarded-for' })).toBe('198.51.100.7');
    expect(clientAddress('203.0.113.9, 198.51.100.7, 10.0.0.1', '127.0.0.1', { header: 'x-forwarded-for', trustedProxies: ['10.0.0.1'] })).toBe('198.51.100.7');
    expect(clientAddress(null, '127.0.0.1', { header: 'x-forwarded-for' })).toBe('127.0.0.1');
    expect(clientAddress('203.0.113.9', '127.0.0.1', {})).toBe('127.0.0.1');

    // The attack: a new made-up address in front of the header on every try, from one real address.
    const userId = await createUser('rotating@example.com');
    const answers: string[] = [];
    for (let i = 1; i <= 8; i++) {
      const spoofed = new Visitor(`203.0.113.${i}, 198.51.100.200, ${TRUSTED_PROXY}`);
      answers.push(alert((await spoofed.post('/sign-in', '/sign-in/password', { email: 'rotating@example.com', password: `wrong guess ${i}` })).text));
    }
    // Gatehouse saw one address, its bucket ran out, and every wrong password is recorded against it.
    expect(answers.some((text) => text.startsWith('Too many attempts'))).toBe(true);
    const events = await admin.listEvents({ user_id: userId, type: 'password.incorrect', limit: 100 });
    expect(events.data?.length).toBeGreaterThan(0);
    expect([...new Set(events.data?.map((event) => event.client_ip))]).toEqual(['198.51.100.200']);
  }, 60_000);

  test('pre-account hijacking: an account whose address is not confirmed cannot get a passkey or an authenticator app', async () => {
    const browser = await WebAuthnBrowser.launch();
    try {
      const tab = await browser.open(`${origin}/`);
      const page = tab.page;
      await page.setExtraHTTPHeaders({ 'x-forwarded-for': `198.51.100.${++addresses}` });
      // The attacker signs up with the victim's address and stays signed in, waiting for the victim.
      await page.goto(`${origin}/sign-up`);
      await page.fill('input[name=email]', 'victim@example.com');
      await page.fill('input[name=password]', PASSWORD);
      await Promise.all([page.waitForLoadState('load'), page.click('#sign-up')]);
      const victim = (await admin.listUsers({ email: 'victim@example.com' })).data![0]!;
      expect(victim.email_verified).toBe(false);
      await page.goto(`${origin}/account`);
      expect(await page.locator('#passkey-add').count()).toBe(0);
      // The button is gone; the attacker runs the ceremony by hand in the page.
      const outcome = await page.evaluate(async () => {
        const browserSide = globalThis as any;
        const csrf: string = browserSide.document.querySelector('meta[name="csrf-token"]').content;
        const post = (path: string, body: unknown) => fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) });
        const options = await post('/account/passkeys/options', {});
        if (!options.ok) return `options ${options.status}: ${((await options.json()) as { error: string }).error}`;
        const response = await browserSide.SimpleWebAuthnBrowser.startRegistration({ optionsJSON: await options.json() });
        const added = await post('/account/passkeys', { response });
        return `added ${added.status}`;
      });
      expect(outcome).toMatch(/^options 400: Please confirm your email address first/);
      // And the authenticator app, with a code computed from the key the page would show.
      await page.goto(`${origin}/account/totp`);
      const key = await page.locator('#totp-key').textContent({ timeout: 1000 }).catch(() => null);
      expect(key).toBeNull();
      const person = visitor();
      await person.post('/sign-in', '/sign-in/password', { email: 'victim@example.com', password: PASSWORD });
      const shown = await person.get('/account/totp');
      const shownKey = /<code id="totp-key">([A-Z2-7]+)<\/code>/.exec(shown.text)?.[1];
      if (shownKey) await person.send('POST', '/account/totp', { code: new TOTP({ secret: Secret.fromBase32(shownKey) }).generate() });
      expect(shownKey).toBeUndefined();
      const after = (await admin.getUser({ id: victim.id })).data!;
      expect({ passkeys: after.passkey_count, totp: after.registered_totp }).toEqual({ passkeys: 0, totp: false });
      expect(await tab.credentials()).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  test('codes go to the address Gatehouse stored, never to a look-alike as typed', async () => {
    await createUser('kate@example.com', true);
    const lookAlike = '\u212Aate@example.com'; // KELVIN SIGN, which Gatehouse reads as a K
    const before = mailbox.list().length;
    const signIn = await visitor().post('/sign-in', '/sign-in/email-code', { email: lookAlike });
    expect(signIn.location).toBe('/sign-in/email-code');
    const reset = await visitor().post('/reset', '/reset', { email: lookAlike });
    expect(reset.location).toBe('/reset/code');
    const sent = mailbox.list().slice(0, mailbox.list().length - before);
    expect(sent.map((mail) => [mail.subject, mail.to])).toEqual([
      ['Reset your password', 'kate@example.com'],
      ['Your sign-in code', 'kate@example.com'],
    ]);
  }, 60_000);

  test('the code pages answer the same for an address with an account, one without, and a disabled one', async () => {
    await createUser('known@example.com', true);
    const disabledId = await createUser('disabled@example.com', true);
    expect((await admin.disableUser({ id: disabledId })).error).toBeNull();
    const seen: Record<string, unknown> = {};
    for (const email of ['known@example.com', 'nobody@example.com', 'disabled@example.com']) {
      const person = visitor();
      const asked = await person.post('/sign-in', '/sign-in/email-code', { email });
      const stored = person.has('sid');
      const wrong = await person.send('POST', '/sign-in/email-code/verify', { code: 'AAAAAAAA' });
      const resetPerson = visitor();
      const resetAsked = await resetPerson.post('/reset', '/reset', { email });
      const resetWrong = await resetPerson.send('POST', '/reset/code', { code: 'AAAAAAAA', password: 'a new long password' });
      seen[email] = { asked: [asked.status, asked.location, alert(asked.text)], stored, wrong: [wrong.status, alert(wrong.text)], reset: [resetAsked.status, resetAsked.location, resetPerson.has('sid'), resetWrong.status, alert(resetWrong.text)] };
    }
    // The user's own limit of 3 codes in 15 minutes must not tell an account either.
    for (const email of ['known@example.com', 'nobody@example.com']) {
      const answers: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const asked = await visitor().post('/sign-in', '/sign-in/email-code', { email });
        answers.push([asked.status, asked.location, alert(asked.text)]);
      }
      (seen[email] as Record<string, unknown>).more = answers;
    }
    expect(seen['nobody@example.com']).toEqual(seen['known@example.com']);
    expect(seen['disabled@example.com']).toEqual({ ...(seen['known@example.com'] as object), more: undefined });
    expect(JSON.stringify(seen['known@example.com'])).toContain('That code is not right, or it is no longer valid');
  }, 60_000);

  test('/mailbox is off unless asked for, and then only for this machine', async () => {
    await visitor().post('/reset', '/reset', { email: 'kate@example.com' });
    const off = await fetch(`${origin}/mailbox`);
    expect(off.status).toBe(404);
    expect(await off.text()).not.toContain('code is');

    const devMailbox = new Mailbox();
    devMailbox.send('kate@example.com', 'Reset your password', 'Your password reset code is ABCDEFGH.');
    const dev = exampleApp({ mailbox: devMailbox, devMailbox: true });
    const port = await listen(dev, '0.0.0.0');
    const local = await fetch(`http://127.0.0.1:${port}/mailbox`);
    expect(local.status).toBe(200);
    expect(await local.text()).toContain('code is ABCDEFGH');
    // Through the proxy (the caller is elsewhere even though the connection is local): refused.
    const proxied = await fetch(`http://127.0.0.1:${port}/mailbox`, { headers: { 'x-forwarded-for': '203.0.113.50' } });
    expect(proxied.status).toBe(404);
    expect(await proxied.text()).not.toContain('ABCDEFGH');
    // Straight from another machine, where this one has another address to be reached on.
    const external = Object.values(networkInterfaces()).flat().find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    if (external) {
      const remote = await fetch(`http://${external}:${port}/mailbox`);
      expect(remote.status).toBe(404);
      expect(await remote.text()).not.toContain('ABCDEFGH');
    }
  }, 60_000);

  test('a session ends within a minute of a disable, a password change elsewhere or the address proved by someone else, and at once after a reset in the app', async () => {
    const disabledId = await createUser('later-disabled@example.com', true);
    const held = await signedIn('later-disabled@example.com');
    expect((await admin.disableUser({ id: disabledId })).error).toBeNull();
    setSystemTime(new Date(Date.now() + 61_000));
    expect((await held.get('/account')).location).toBe('/sign-in');
    setSystemTime();

    const changedId = await createUser('changed@example.com', true);
    const stolen = await signedIn('changed@example.com');
    expect((await admin.updateUserPassword({ id: changedId, password: PASSWORD, new_password: `${PASSWORD} changed` })).error).toBeNull();
    setSystemTime(new Date(Date.now() + 61_000));
    expect((await stolen.get('/account')).location).toBe('/sign-in');
    setSystemTime();

    // Pre-account hijacking, the end of it: whoever signed up with the victim's address and waits,
    // signed in, loses the session once the victim proves the address (here by an emailed code).
    const waiting = visitor();
    expect((await waiting.post('/sign-up', '/sign-up', { email: 'waiting@example.com', password: PASSWORD })).status).toBe(200);
    expect((await waiting.get('/account')).status).toBe(200);
    const owner0 = visitor();
    await owner0.post('/sign-in', '/sign-in/email-code', { email: 'waiting@example.com' });
    const emailed = /code is ([A-Z0-9]+)/.exec(mailbox.list()[0]!.body)![1]!;
    expect((await owner0.send('POST', '/sign-in/email-code/verify', { code: emailed })).location).toBe('/account');
    setSystemTime(new Date(Date.now() + 61_000));
    expect((await waiting.get('/account')).location).toBe('/sign-in');
    expect((await owner0.get('/account')).status).toBe(200);
    setSystemTime();

    await createUser('reset@example.com', true);
    const other = await signedIn('reset@example.com');
    const owner = visitor();
    await owner.post('/reset', '/reset', { email: 'reset@example.com' });
    const code = /code is ([A-Z0-9]+)/.exec(mailbox.list()[0]!.body)![1]!;
    expect((await owner.send('POST', '/reset/code', { code, password: 'the owner chose a new password' })).location).toBe('/sign-in');
    expect((await other.get('/account')).location).toBe('/sign-in');
    // The owner signs in again with the new password and stays in.
    const again = await owner.post('/sign-in', '/sign-in/password', { email: 'reset@example.com', password: 'the owner chose a new password' });
    expect(again.location).toBe('/account');
    setSystemTime(new Date(Date.now() + 61_000));
    expect((await owner.get('/account')).status).toBe(200);
  }, 60_000);

  test('requests without a cookie store no session, and the store is bounded', async () => {
    const before = sessions.size;
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => fetch(`${origin}/${i % 2 ? 'sign-in' : ''}`)));
    expect(answers.filter((answer) => answer.headers.getSetCookie().some((line) => line.startsWith('sid='))).length).toBe(0);
    expect(sessions.size).toBe(before);

    const small = new SessionStore(false, 10);
    const bounded = exampleApp({ sessions: small });
    const port = await listen(bounded);
    await createUser('bounded@example.com', true);
    const kept = new Visitor(`198.51.100.${++addresses}`, `http://localhost:${port}`);
    expect((await kept.post('/sign-in', '/sign-in/password', { email: 'bounded@example.com', password: PASSWORD })).location).toBe('/account');
    for (let i = 0; i < 30; i++) {
      const flood = new Visitor(`198.51.100.${++addresses}`, `http://localhost:${port}`);
      await flood.post('/sign-in', '/sign-in/email-code', { email: `flood${i}@example.com` });
      expect(flood.has('sid')).toBe(true);
    }
    expect(small.size).toBeLessThanOrEqual(10);
    expect((await kept.get('/account')).status).toBe(200);
  }, 60_000);

  test('with Gatehouse unreachable the error page names no address and keeps the security headers', async () => {
    const closed = await freePort();
    const down = exampleApp({ gatehouse: createGatehouseClient({ url: `http://127.0.0.1:${closed}`, secret: 'x'.repeat(24), retries: 0 }) });
    const port = await listen(down);
    const person = new Visitor(`198.51.100.${++addresses}`, `http://localhost:${port}`);
    const failed = await person.post('/sign-in', '/sign-in/password', { email: 'someone@example.com', password: PASSWORD });
    expect(failed.text).not.toContain(String(closed));
    expect(failed.text).not.toContain('127.0.0.1');
    expect(failed.text).not.toContain('Gatehouse');
    expect(failed.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(failed.headers.get('cache-control')).toBe('no-store');
    expect(failed.status).toBe(503);
    const missing = await person.get('/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toContain("default-src 'self'");
  }, 60_000);
});
