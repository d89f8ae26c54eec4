import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { createExampleApp } from '../examples/app/src/app';
import { createGatehouseClient } from '../examples/app/src/gatehouse';
import { Mailbox } from '../examples/app/src/mailbox';
import { SessionStore } from '../examples/app/src/session';
import { ensureChromium, WebAuthnBrowser, type WebAuthnPage } from './support/browser-webauthn';
import { reportSkipped } from './support/debian-packages';
import { freePort } from './support/engine-process';
import { startServer, tempDirsOfThisFile, type ServerProcess } from './support/server-process';

/**
 * The example app (examples/app) end to end, as a person uses it: headless Chromium with a virtual
 * passkey authenticator, the app in this process, the real Gatehouse process behind it. Every flow
 * the app offers, in the order a new user meets them. A failing step saves a screenshot and says where.
 */
const skip = reportSkipped('the example app in a real browser', await ensureChromium());
const tempDir = tempDirsOfThisFile();
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? join(tmpdir(), 'gatehouse-example-screenshots');
const EMAIL = 'ada@example.com';
const PASSWORD = 'a long example app password';
const NEW_PASSWORD = 'another long example app password';

let gatehouse: ServerProcess;
let app: ReturnType<typeof createExampleApp>;
let browser: WebAuthnBrowser;
let tab: WebAuthnPage;
let page: Page;
let origin: string;
let recoveryCode = '';
let totpSecret: Secret;

/** Runs a step; when it fails, keeps a screenshot of what the browser showed. */
let addresses = 0;
async function step(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': `192.0.2.${++addresses}` });
    await body();
  } catch (error) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = join(SCREENSHOTS, `${name.replace(/[^a-z0-9]+/gi, '-')}.png`);
    await page.screenshot({ path, fullPage: true }).catch(() => undefined);
    console.error(`example app: step "${name}" failed on ${page.url()}; screenshot: ${path}`);
    throw error;
  }
}

const go = (path: string) => page.goto(`${origin}${path}`);
const submit = async (button: string) => {
  await Promise.all([page.waitForLoadState('load'), page.click(button)]);
};
/** The newest mail's code, read from the app's mailbox (its /mailbox page is off unless asked for). */
let mailbox: Mailbox;
async function lastCode(): Promise<string> {
  const body = mailbox.list()[0]?.body;
  const match = /code is ([A-Z0-9]+)/.exec(body ?? '');
  if (!match) throw new Error(`no code in the newest mail: ${body}`);
  return match[1]!;
}
/** A code for the next time step: later than any step Gatehouse accepted, inside its ±1 window. */
const nextTotpCode = () => new TOTP({ secret: totpSecret }).generate({ timestamp: Date.now() + 30_000 });

async function signOut(): Promise<void> {
  await submit('nav form button');
  expect(new URL(page.url()).pathname).toBe('/');
}

async function signInWithPassword(password: string): Promise<void> {
  await go('/sign-in');
  await page.fill('form[action="/sign-in/password"] input[name=email]', EMAIL);
  await page.fill('form[action="/sign-in/password"] input[name=password]', password);
  await submit('#password-sign-in');
}

describe.skipIf(skip)('the example app in a real browser', () => {
  beforeAll(async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    gatehouse = await startServer({ dir: tempDir(), extraArgs: ['--secret', 'example-app-test-secret-0123', '--webauthn-rp-id', 'localhost', '--webauthn-rp-name', 'Example app', '--webauthn-origin', origin] });
    app = createExampleApp({
      gatehouse: createGatehouseClient({ url: gatehouse.url, secret: gatehouse.secret }),
      mailbox: (mailbox = new Mailbox()),
      sessions: new SessionStore(false),
      issuer: 'Example app',
      // Every step comes from 127.0.0.1; as behind a proxy, each test gets its own address, so
      // Gatehouse's per-address bucket (5 calls, 1 back every 10 s) limits people, not this test.
      clientIpHeader: 'x-forwarded-for',
    });
    app.listen({ port });
    // Another account, created first: the reset must find Ada's by her address, not take the first.
    expect((await gatehouse.request('POST', '/users', { email: 'bob@example.com', password: PASSWORD })).status).toBe(200);
    browser = await WebAuthnBrowser.launch();
    tab = await browser.open(`${origin}/`);
    page = tab.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await gatehouse?.stop();
  });

  test('sign up shows the recovery code once and emails a confirmation code', () => step('sign up', async () => {
    await go('/sign-up');
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', PASSWORD);
    await submit('#sign-up');
    recoveryCode = (await page.textContent('#recovery-code')) ?? '';
    expect(recoveryCode).toMatch(/^[A-Z2-9]{16}$/);
    const code = await lastCode();
    expect(code).toMatch(/^[A-Z2-9]{8}$/);
    await go('/verify-email');
    await page.fill('input[name=code]', code);
    await submit('#verify-email-submit');
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.textContent('#email-verified')).toBe('(confirmed)');
  }), 60_000);

  test('the session cookie is HttpOnly and SameSite=Lax, and a form without its CSRF token is refused', () => step('cookies and csrf', async () => {
    const cookies = await page.context().cookies();
    const sid = cookies.find((cookie) => cookie.name === 'sid');
    expect(sid?.httpOnly).toBe(true);
    expect(sid?.sameSite).toBe('Lax');
    const forged = await fetch(`${origin}/sign-out`, { method: 'POST', headers: { cookie: `sid=${sid?.value}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=wrong', redirect: 'manual' });
    expect(forged.status).toBe(403);
    await go('/account');
    expect(new URL(page.url()).pathname).toBe('/account'); // the forged sign-out changed nothing
  }), 60_000);

  test('sign out, then in with the password', () => step('password sign-in', async () => {
    await signOut();
    await signInWithPassword(PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/account');
    await signOut();
    await signInWithPassword('not the password at all');
    expect(await page.textContent('[role=alert]')).toContain('Wrong email address or password');
    await signInWithPassword(PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/account');
  }), 60_000);

  test('TOTP enrolment with a QR code, then sign-in asks for a code', () => step('totp', async () => {
    await go('/account/totp');
    expect(await page.locator('#totp-qr svg').count()).toBe(1);
    totpSecret = Secret.fromBase32((await page.textContent('#totp-key')) ?? '');
    await page.fill('input[name=code]', new TOTP({ secret: totpSecret }).generate());
    await submit('#totp-confirm');
    recoveryCode = (await page.textContent('#recovery-code')) ?? '';
    expect(recoveryCode).toMatch(/^[A-Z2-9]{16}$/);
    await go('/account');
    expect(await page.textContent('#totp-state')).toBe('on');
    await signOut();
    await signInWithPassword(PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/sign-in/second-factor');
    await go('/account');
    expect(new URL(page.url()).pathname).toBe('/sign-in'); // not signed in before the second factor
    await go('/sign-in/second-factor');
    await page.fill('input[name=code]', nextTotpCode());
    await submit('#totp-submit');
    expect(new URL(page.url()).pathname).toBe('/account');
  }), 60_000);

  test('a passkey is added and then signs in alone', () => step('passkey', async () => {
    await go('/account');
    await Promise.all([page.waitForURL(`${origin}/account`, { waitUntil: 'load' }), page.click('#passkey-add')]);
    await page.waitForSelector('#passkeys li');
    expect(await page.locator('#passkeys li').count()).toBe(1);
    expect((await tab.credentials()).length).toBe(1);
    await signOut();
    await go('/sign-in');
    await Promise.all([page.waitForURL(`${origin}/account`, { waitUntil: 'load' }), page.click('#passkey-sign-in')]);
    expect(await page.textContent('[role=status]')).toContain('passkey');
  }), 60_000);

  test('an emailed code signs in, and the recovery code stands in for the lost authenticator', () => step('email code', async () => {
    await signOut();
    await go('/sign-in');
    await page.fill('form[action="/sign-in/email-code"] input[name=email]', EMAIL);
    await submit('#email-code-request');
    const code = await lastCode();
    await go('/sign-in/email-code');
    await page.fill('input[name=code]', code);
    await submit('#email-code-submit');
    expect(new URL(page.url()).pathname).toBe('/sign-in/second-factor');
    await page.click('summary');
    await page.fill('input[name=recovery_code]', recoveryCode);
    await submit('#recovery-submit');
    expect(new URL(page.url()).pathname).toBe('/account');
    expect(await page.textContent('[role=status]')).toMatch(/new recovery code is [A-Z2-9]{16}/);
    expect(await page.textContent('#totp-state')).toContain('off');
  }), 60_000);

  test('a forgotten password is reset with an emailed code', () => step('password reset', async () => {
    await signOut();
    await go('/reset');
    await page.fill('input[name=email]', EMAIL);
    await submit('#reset-request');
    const code = await lastCode();
    await go('/reset/code');
    await page.fill('input[name=code]', code);
    await page.fill('input[name=password]', NEW_PASSWORD);
    await submit('#reset-submit');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.textContent('[role=status]')).toContain('password was changed');
    await signInWithPassword(PASSWORD);
    expect(await page.textContent('[role=alert]')).toContain('Wrong email address or password');
    await signInWithPassword(NEW_PASSWORD);
    expect(new URL(page.url()).pathname).toBe('/account');
  }), 60_000);

  test('an API key is made and shown once, works on the app\'s own API, and stops when deleted', () => step('api keys', async () => {
    await go('/account');
    await submit('#api-keys-link');
    await page.fill('input[name=name]', 'backup script');
    await submit('#api-key-create');
    const key = (await page.textContent('#api-key-new')) ?? '';
    expect(key).toMatch(/^gh_[a-z2-9]{24}_[A-Za-z0-9_-]{43}$/);
    expect(await page.textContent('#api-keys')).toContain('backup script');
    const me = (bearer: string) => fetch(`${origin}/api/me`, { headers: { authorization: `Bearer ${bearer}` } });
    const answer = await me(key);
    expect([answer.status, await answer.json()]).toEqual([200, { email: EMAIL, key: 'backup script' }]);
    expect((await me(`${key.slice(0, -2)}AA`)).status).toBe(401);
    await go('/account/api-keys');
    expect(await page.locator('#api-key-new').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    await submit('.api-key-delete');
    expect(await page.textContent('[role=status]')).toContain('deleted');
    expect(await page.locator('#api-keys li').count()).toBe(0);
    const after = await me(key);
    expect([after.status, await after.json()]).toEqual([401, { error: 'not a valid key' }]);
  }), 60_000);
});
