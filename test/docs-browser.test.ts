import { afterAll, beforeAll, expect, test } from 'bun:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureDebianPackages, reportSkipped } from './support/debian-packages';
import { createHarness, SECRET } from './support/harness';

// Debian's Chromium, installed here when missing (as root); Playwright never downloads a browser.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const availability = process.env.CHROMIUM_PATH ? { ok: true as const } : await ensureDebianPackages([{ name: 'chromium', provides: CHROMIUM }]);
const skipped = reportSkipped('docs browser test (Swagger UI in Chromium)', availability);

const h = createHarness();
let server: ReturnType<typeof Bun.serve> | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  if (skipped) return;
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: h.handle });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  server?.stop(true);
});

/** A page that records every request leaving the origin and every Content-Security-Policy violation. */
async function openDocs(): Promise<{ page: Page; offsite: string[]; violations: string[] }> {
  const page = await browser!.newPage();
  const origin = server!.url.origin;
  const offsite: string[] = [];
  const violations: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) offsite.push(request.url());
  });
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
  // Strings, not functions: this test file is type-checked without the DOM library.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));",
  });
  const response = await page.goto(`${origin}/docs`);
  expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
  await page.locator('.opblock').first().waitFor();
  return { page, offsite, violations };
}

async function authorize(page: Page): Promise<void> {
  await page.locator('button.authorize').first().click();
  await page.locator('.auth-container input').first().fill(SECRET);
  await page.locator('.auth-btn-wrapper button.authorize').click();
  await page.locator('.auth-btn-wrapper button.btn-done').click();
}

/** Runs "Try it out" on GET /users/{id} and returns the status and body Swagger UI shows. */
async function tryGetUser(page: Page, id: string): Promise<{ status: string; body: string }> {
  const operation = page.locator('.opblock-get').filter({ has: page.locator('[data-path="/users/{id}"]') });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  await operation.locator('input[placeholder="id"]').fill(id);
  await operation.locator('button.execute').click();
  const live = operation.locator('.live-responses-table');
  await live.locator('tr.response .response-col_status').first().waitFor();
  return {
    status: (await live.locator('tr.response .response-col_status').first().innerText()).trim(),
    body: await live.locator('.response-col_description pre').first().innerText(),
  };
}

test.skipIf(skipped)('the docs page authorizes and runs "Try it out" under its CSP, with nothing from another origin', async () => {
  const user = await h.createUser({ email: 'docs@example.com' });
  const { page, offsite, violations } = await openDocs();
  await authorize(page);
  const answer = await tryGetUser(page, user.id);
  expect(answer.status).toBe('200');
  expect(JSON.parse(answer.body)).toMatchObject({ id: user.id, email: 'docs@example.com', registered_totp: false });
  expect(offsite).toEqual([]);
  expect(violations).toEqual([]);
  await page.close();
}, 60_000);

test.skipIf(skipped)('the entered secret is not kept: nothing of it in storage, and gone after a reload', async () => {
  const user = await h.createUser();
  const { page } = await openDocs();
  await authorize(page);
  expect((await tryGetUser(page, user.id)).status).toBe('200');
  const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
  expect(stored).not.toContain(SECRET);
  expect(stored).not.toContain(SECRET.slice(0, 8));

  await page.reload();
  await page.locator('.opblock').first().waitFor();
  expect(await page.evaluate<string>('JSON.stringify({ ...localStorage })')).not.toContain(SECRET);
  // Not authorized any more: the request goes out without the credential.
  const answer = await tryGetUser(page, user.id);
  expect(answer.status).toBe('401');
  expect(JSON.parse(answer.body)).toEqual({ error: 'NOT_AUTHENTICATED' });
  await page.close();
}, 60_000);
