// A password migration hook (API.md §19) as an old system's team would run it, in a process of its
// own: `bun test/support/migration-hook-server.ts` with HOOK_SECRET (whsec_…) and HOOK_USERS (a JSON
// object of email → password). It checks each request's Standard Webhooks signature with the
// standardwebhooks package (401 when it fails), then answers by the password's prefix, so one user
// can meet every kind of answer: slow- (after 6 s), huge- (1 MiB), status500-, redirect- (to a path
// that would say match), nonjson-, yes- ({"match":"yes"}); any other password matches when it is
// the user's in HOOK_USERS. GET /requests lists what it received. It prints its port and nothing else.
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.HOOK_SECRET!);
const users: Record<string, string> = JSON.parse(process.env.HOOK_USERS ?? '{}');
const received: { body: unknown; headers: Record<string, string>; verified: boolean; at: number }[] = [];
const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 30,
  async fetch(request) {
    const url = new URL(request.url);
    if (request.method === 'GET' && url.pathname === '/requests') return json(received);
    if (url.pathname === '/always-match') return json({ match: true });
    const text = await request.text();
    const headers = Object.fromEntries(request.headers.entries());
    let verified = true;
    try {
      webhook.verify(text, headers);
    } catch {
      verified = false;
    }
    received.push({ body: JSON.parse(text), headers, verified, at: Date.now() });
    if (!verified) return json({ error: 'bad signature' }, 401);
    const { email, password } = JSON.parse(text) as { email: string | null; password: string };
    if (password.startsWith('slow-')) {
      await Bun.sleep(6_000);
      return json({ match: true });
    }
    if (password.startsWith('huge-')) return json({ match: true, padding: 'x'.repeat(1024 * 1024) });
    if (password.startsWith('status500-')) return json({ match: true }, 500);
    if (password.startsWith('redirect-')) return new Response(null, { status: 307, headers: { location: `${url.origin}/always-match` } });
    if (password.startsWith('nonjson-')) return new Response('match', { status: 200 });
    if (password.startsWith('yes-')) return json({ match: 'yes' });
    return json({ match: email !== null && users[email] === password });
  },
});
console.log(server.port);
