import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { createHarness, SECRET } from './support/harness';

// Debian's Chromium; .ci/run installs it. Playwright never downloads a browser here.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const h = createHarness();
let server: ReturnType<typeof Bun.serve>;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (see .ci/run)`);
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

test('the docs page authorizes and runs "Try it out" against Gatehouse', async () => {
  const user = await h.createUser({ email: 'docs@example.com' });
  const page = await browser.newPage();
  const offsite: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url.origin)) offsite.push(request.url());
  });

  await page.goto(`${server.url.origin}/docs`);
  await page.locator('button.authorize').first().click();
  await page.locator('.auth-container input').first().fill(SECRET);
  await page.locator('.auth-btn-wrapper button.authorize').click();
  await page.locator('.auth-btn-wrapper button.btn-done').click();

  const operation = page.locator('.opblock-get').filter({ has: page.locator('[data-path="/users/{id}"]') });
  await operation.locator('.opblock-summary').click();
  await operation.locator('button.try-out__btn').click();
  await operation.locator('input[placeholder="id"]').fill(user.id);
  await operation.locator('button.execute').click();

  const live = operation.locator('.live-responses-table');
  await live.locator('tr.response .response-col_status').first().waitFor();
  expect((await live.locator('tr.response .response-col_status').first().innerText()).trim()).toBe('200');
  const body = await live.locator('.response-col_description pre').first().innerText();
  expect(JSON.parse(body)).toMatchObject({ id: user.id, email: 'docs@example.com', registered_totp: false });
  expect(offsite).toEqual([]);
}, 60_000);
