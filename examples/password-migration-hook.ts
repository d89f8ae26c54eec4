// A password migration hook for users moved from Auth0 without their hashes (docs/migrating.md,
// "No hashes to export"). Gatehouse POSTs {user_id, email, password}, signed with the secret both
// are given; this checks the signature, asks Auth0 whether the password is right (the Resource Owner
// Password grant of an application allowed to use it), and answers {"match": true|false}. Anything
// it cannot tell (Auth0 down or rate limiting) is a 502: Gatehouse then answers 503 and counts nothing.
//
//   GATEHOUSE_PASSWORD_MIGRATION_SECRET=whsec_...   the same value Gatehouse is given
//   AUTH0_TOKEN_URL=https://YOUR-TENANT.us.auth0.com/oauth/token
//   AUTH0_CLIENT_ID=...  AUTH0_CLIENT_SECRET=...    an application with the Password grant enabled
//   AUTH0_CONNECTION=Username-Password-Authentication (the default)
//   HOOK_PORT=4100 (the default); it listens on 127.0.0.1 only
import { Webhook } from 'standardwebhooks';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};
const webhook = new Webhook(env('GATEHOUSE_PASSWORD_MIGRATION_SECRET'));
const tokenUrl = env('AUTH0_TOKEN_URL');
const client = { client_id: env('AUTH0_CLIENT_ID'), client_secret: env('AUTH0_CLIENT_SECRET') };
const realm = env('AUTH0_CONNECTION', 'Username-Password-Authentication');

/** True or false when Auth0 says so; undefined when it cannot tell. Never logs the password. */
async function auth0Accepts(email: string, password: string): Promise<boolean | undefined> {
  const response = await fetch(tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'http://auth0.com/oauth/grant-type/password-realm', realm, username: email, password, scope: 'openid', ...client }),
    signal: AbortSignal.timeout(4_000), // within Gatehouse's 5 s
  });
  if (response.ok) return true;
  const { error } = (await response.json().catch(() => ({}))) as { error?: string };
  // invalid_grant: wrong email or password. Anything else (too_many_attempts, a 5xx) is no answer.
  return response.status === 403 && error === 'invalid_grant' ? false : undefined;
}

Bun.serve({
  hostname: '127.0.0.1',
  port: Number(env('HOOK_PORT', '4100')),
  async fetch(request) {
    const body = await request.text(); // the raw body: re-serialised JSON would not verify
    let user: { user_id: string; email: string | null; password: string };
    try {
      user = webhook.verify(body, Object.fromEntries(request.headers)) as typeof user;
    } catch {
      return new Response('bad signature', { status: 401 });
    }
    if (user.email === null) return Response.json({ match: false });
    const match = await auth0Accepts(user.email, user.password).catch(() => undefined);
    return match === undefined ? new Response('Auth0 gave no answer', { status: 502 }) : Response.json({ match });
  },
});
console.log('password migration hook listening on 127.0.0.1');
