import { createExampleApp } from './app';
import { createGatehouseClient } from './gatehouse';
import { Mailbox } from './mailbox';
import { SessionStore } from './session';

/**
 * Runs the example app. Gatehouse must be running with its passkey settings naming this app:
 *   --webauthn-rp-id localhost --webauthn-rp-name "Example app" --webauthn-origin http://localhost:3000
 */
const secret = process.env.GATEHOUSE_SECRET;
if (!secret) {
  console.error('Set GATEHOUSE_SECRET to the secret Gatehouse uses (for example $(cat gatehouse_data/secret)).');
  process.exit(2);
}
const origin = new URL(process.env.APP_ORIGIN ?? 'http://localhost:3000');
const app = createExampleApp({
  gatehouse: createGatehouseClient({ url: process.env.GATEHOUSE_URL ?? 'http://127.0.0.1:4000', secret }),
  mailbox: new Mailbox(),
  sessions: new SessionStore(origin.protocol === 'https:'),
  issuer: process.env.APP_NAME ?? 'Example app',
  clientIpHeader: process.env.CLIENT_IP_HEADER || undefined,
  trustedProxies: (process.env.TRUSTED_PROXIES ?? '').split(',').map((address) => address.trim()).filter(Boolean),
  // Shows every code sent: for development on this machine only, never in production.
  devMailbox: process.env.DEV_MAILBOX === '1',
});
app.listen({ port: Number(process.env.PORT ?? origin.port ?? 3000), hostname: process.env.HOST ?? '127.0.0.1' });
console.log(`example app on ${origin.origin} (listening on ${app.server?.hostname}:${app.server?.port})`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => app.stop().then(() => process.exit(0)));
